#!/bin/sh
# Print the C block that follows the "<!-- example -->" marker in the README (or "<!-- example: NAME -->" with
# NAME as the second argument), so the tests compile exactly what a reader sees.
marker="<!-- example${2:+: $2} -->"
awk -v marker="$marker" 'index($0, marker) == 1 {m=1; next} m && /^```c/ {p=1; next} p && /^```/ {exit} p' "$1"
