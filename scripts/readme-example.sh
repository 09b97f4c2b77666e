#!/bin/sh
# Print the C block that follows the "<!-- example -->" marker in the README,
# so the tests compile exactly what a reader sees.
awk '/<!-- example -->/ {m=1; next} m && /^```c/ {p=1; next} p && /^```/ {exit} p' "$1"
