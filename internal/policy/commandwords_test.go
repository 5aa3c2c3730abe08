package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestSimpleCommands(t *testing.T) {
	for _, c := range []struct {
		line, want, opaque string
	}{
		{"go test ./... && go vet ./...", "go test ./...|go vet ./...", ""},
		{"ls | grep -c x > out.txt", "ls|grep -c x", ""},
		{"A=1 make test", "make test", ""},
		{"echo $(id)", "", "the word $(id) expands"},
		{"$(id)", "", "expands"},
		{"cat <(ls)", "", "the word <(ls) expands"},
		{"f() { rm x; }; f", "", "declares a function"},
		{"X=rm; $X y", "", "the word $X expands"},
		{"eval ls", "", "eval runs"},
		{"sudo bash -c 'rm x'", "", "bash is given code"},
		{"python3 -c 'print(1)'", "", "python3 is given code"},
		{"python3 script.py", "python3 script.py", ""},
		{"if true; then", "", "does not parse"},
		{"bash <<< 'rm x'", "", "bash reads the code it runs from its input"},
		{"printf 'rm x' | sh", "", "sh reads the code"},
		{"sh < script.sh", "", "sh reads the code"},
		{"python3 - < x.py", "", "python3 reads the code"},
		{"bash -s", "", "bash reads the code"},
		{"trap 'rm x' EXIT; true", "", "trap runs its argument later"},
		{"watch rm x", "", "watch runs its arguments"},
		{"awk 'BEGIN{system(\"rm x\")}'", "", "awk's program runs commands"},
		{"awk -f prog.awk data", "", "runs a program file"},
		{"flock /tmp/l -c 'rm x'", "", "flock -c runs a string"},
		{"script -qc 'rm x' /dev/null", "", "script runs a shell"},
		{"env -S 'rm x'", "", "env -S runs a string"},
		{"su -c 'rm x' a", "", "su -c runs a string"},
		{"deno eval 'Deno.remove(\"x\")'", "", "deno eval runs code"},
		{"perl -E 'unlink q(x)'", "", "perl is given code"},
		{"python3 -E script.py", "python3 -E script.py", ""},
		{"python3 -m pytest -q", "python3 -m pytest -q", ""},
		{"node --version", "node --version", ""},
		{"awk '{print $1}' f", "awk {print $1} f", ""},
		{"node app.js", "node app.js", ""},
		{"x='a[$(rm f)]'; (( x ))", "", "arithmetic evaluates"},
		{"let x", "", "arithmetic evaluates"},
		{"[[ x -eq 0 ]]", "", "-eq … ]] evaluates"},
		{"hash -p /bin/rm x; x f", "", "hash -p makes a name run"},
		{"mapfile -C 'rm f #' -c 1 a <<< y", "", "mapfile -C runs"},
		{"echo rm f | bash /dev/stdin", "", "bash reads the code"},
		{"rbash -c 'rm f'", "", "rbash is given code"},
		{"perl '-Mstrict;`rm f`' /dev/null", "", "perl loads code its options name"},
		{"node --import=data:x /dev/null", "", "node loads code"},
		{"sed -n '1e rm f' file", "", "sed's e command"},
		{"sed 's/x/rm f/e' file", "", "sed's e command"},
		{"sed -e 's/a/b/g' file", "sed -e s/a/b/g file", ""},
		{"tar cf x.tar --checkpoint=1 --checkpoint-action=exec='rm f' .", "", "tar --checkpoint-action runs"},
		{"echo 'rm f' | script -q /dev/null", "", "script runs a shell"},
	} {
		cmds, opaque := SimpleCommands(c.line)
		var got []string
		for _, w := range cmds {
			got = append(got, strings.Join(w, " "))
		}
		if c.opaque != "" {
			if !strings.Contains(opaque, c.opaque) {
				t.Errorf("%q: opaque %q, want %q", c.line, opaque, c.opaque)
			}
			continue
		}
		if opaque != "" || strings.Join(got, "|") != c.want {
			t.Errorf("%q: %q (opaque %q), want %q", c.line, got, opaque, c.want)
		}
	}
}

func TestUnwrap(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"timeout -s KILL 5 rm x", "rm x"},
		{"sudo -u a rm x", "rm x"},
		{"nice -n 5 -- rm x", "rm x"},
		{"env -C / -u HOME A=1 rm x", "rm x"},
		{"busybox rm x", "rm x"},
		{"flock /tmp/lock rm x", "rm x"},
		{"chrt -f 10 rm x", "rm x"},
		{"taskset -c 0,1 rm x", "rm x"},
		{"strace -o /dev/null -f rm x", "rm x"},
		{"chroot / rm x", "rm x"},
		{"runuser -u a -- rm x", "rm x"},
		{"xargs -I {} -P 4 rm {}", "rm {}"},
		{"stdbuf -oL rm x", "rm x"},
		{"find . -name a -exec rm {} +", "rm {}"},
		{"find . -execdir sudo -u b rm {} ;", "rm {}"},
		{"ionice -c 3 nice rm x", "rm x"},
		{"prlimit --nofile=100 rm f", "rm f"},
		{"setarch x86_64 rm f", "rm f"},
		{"unshare -w /tmp rm f", "rm f"},
	} {
		words := strings.Fields(c.line)
		var got []string
		for _, w := range Unwrap(words) {
			got = append(got, strings.Join(w, " "))
		}
		if !slices.Contains(got, c.want) {
			t.Errorf("Unwrap(%q) = %q, want it to hold %q", c.line, got, c.want)
		}
	}
}
