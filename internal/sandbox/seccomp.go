package sandbox

import (
	"encoding/binary"
	"os"
	"runtime"
)

// Classic BPF, as seccomp(2) takes it.
const (
	bpfLdAbsW  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	retAllow   = 0x7fff0000
	retErrno   = 0x00050000
	errEACCES  = 13
	afUnix     = 1
	offNr      = 0  // seccomp_data.nr
	offArch    = 4  // seccomp_data.arch
	offArg0Low = 16 // seccomp_data.args[0], low half (little-endian)
)

// unixSocketFilter is a seccomp program that makes socket(AF_UNIX, …)
// fail with EACCES and allows everything else, for this machine's
// architecture; ok is false where ultra has none.
func unixSocketFilter() (prog []byte, ok bool) {
	var arch, nr uint32
	switch runtime.GOARCH {
	case "amd64":
		arch, nr = 0xc000003e, 41 // AUDIT_ARCH_X86_64, __NR_socket
	case "arm64":
		arch, nr = 0xc00000b7, 198 // AUDIT_ARCH_AARCH64, __NR_socket
	default:
		return nil, false
	}
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	p := []insn{
		{bpfLdAbsW, 0, 0, offArch},
		{bpfJeqK, 0, 5, arch}, // another architecture: allow
		{bpfLdAbsW, 0, 0, offNr},
		{bpfJeqK, 0, 3, nr}, // not socket(2): allow
		{bpfLdAbsW, 0, 0, offArg0Low},
		{bpfJeqK, 0, 1, afUnix}, // not AF_UNIX: allow
		{bpfRetK, 0, 0, retErrno | errEACCES},
		{bpfRetK, 0, 0, retAllow},
	}
	out := make([]byte, 0, 8*len(p))
	for _, i := range p {
		out = binary.LittleEndian.AppendUint16(out, i.code)
		out = append(out, i.jt, i.jf)
		out = binary.LittleEndian.AppendUint32(out, i.k)
	}
	return out, true
}

// filterFile is the filter in an unlinked file at its start, for
// bubblewrap's --seccomp descriptor.
func filterFile() (*os.File, error) {
	prog, _ := unixSocketFilter()
	f, err := os.CreateTemp("", "ultra-seccomp-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	if _, err := f.Write(prog); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
