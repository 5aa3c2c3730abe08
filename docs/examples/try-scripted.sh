#!/bin/sh
# A whole run with no model to reach: a small Go project with a failing
# test, and a scripted model that fixes it (fix-calc.json, next to this
# file). Needs ultra and go on PATH. Leaves the project in ./calc-demo.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
demo=${1:-calc-demo}
if [ -e "$demo" ]; then
  echo "try-scripted.sh: $demo already exists: remove it, or give another directory (sh $0 DIR)" >&2
  exit 2
fi
mkdir "$demo"
cd "$demo"
git init -q -b main
mkdir calc
printf 'module example.com/calc\n\ngo 1.21\n' > go.mod
printf 'package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n' > calc/calc.go
printf 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf("Add(2, 3) = %%d, want 5", got)\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal("zero")\n\t}\n}\n' > calc/calc_test.go
git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm "a calculator whose Add subtracts"

# The scripted model, on a free port; stopped when this script ends.
urlfile=$(mktemp)
ultra dev fakemodel --script "$here/fix-calc.json" > "$urlfile" 2>/dev/null &
model=$!
trap 'kill $model 2>/dev/null; rm -f "$urlfile"' EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do
  url=$(head -n 1 "$urlfile" 2>/dev/null || true)
  [ -n "$url" ] && break
  sleep 0.2
done
ultra run --base-url "$url" --model scripted "make the failing test in calc pass"
run=$(ultra runs --json | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n 1)
ultra goals "$run"
ultra diff "$run"
ultra land "$run"
