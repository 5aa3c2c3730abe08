// Package policy holds ultra's pure safety rules: which shell commands are
// provably read-only (so the planning phase can offer bash without letting
// it change anything), which commands would write into protected state
// paths, and how model-supplied paths are cleaned and confined to the
// workspace.
//
// Everything here is a pure function of its arguments: no file system, no
// processes, no clock. The shell rules parse commands with
// mvdan.cc/sh/v3/syntax and judge the syntax tree; they never run anything.
//
// The read-only classifier is deliberately conservative: whatever it cannot
// prove harmless is refused with a short reason the model can act on. It
// trusts the process environment (the variables ultra starts bash with) and
// the programs in the system directories, but not anything the command line
// itself sets, computes or reads from files.
package policy
