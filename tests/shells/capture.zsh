# Complete a command line in a real interactive zsh and print the
# candidates its completion system offers, one a line.
#
#   zsh -f tests/shells/capture.zsh DIR LINE
#
# DIR holds the completion functions (`_kubectl-mesh_inject`), put first on
# fpath; LINE is typed into a zsh run on a pseudo-terminal (zsh/zpty) and
# completed with complete-word, bound to a key of its own. compadd is
# wrapped so that every candidate it is given, and that matches what is on
# the line, is written to a file as well; a marker after the completion
# says it is over.
emulate -L zsh
zmodload zsh/zpty || exit 3
dir=$1 line=$2
out=$(mktemp) || exit 3
zpty shell zsh -f -i || exit 3
# No prompt, no listing that could stop to ask, no beep.
zpty -w shell "PS1=''; unsetopt autolist; setopt nobeep; LISTMAX=100000"
zpty -w shell "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
# Calls that only ask (-O, -A, -D: matches kept in an array) pass through.
zpty -w shell "compadd() {
  if (( \${@[(I)-[OAD]]} )); then builtin compadd \"\$@\"; return; fi
  local -a __found
  builtin compadd -O __found \"\$@\"
  (( \$#__found )) && print -rl -- \$__found >> ${(q)out}
  builtin compadd \"\$@\"
}"
zpty -w shell "capture-completion() { zle complete-word; print -r -- @@done@@ >> ${(q)out}; }"
zpty -w shell "zle -N capture-completion; bindkey '^T' capture-completion"
zpty -w -n shell "$line"$'\x14'
for i in {1..200}; do
  grep -q '^@@done@@$' $out 2>/dev/null && break
  sleep 0.05
done
zpty -d shell
grep -q '^@@done@@$' $out || { rm -f $out; print -u2 "completion did not finish"; exit 4 }
grep -v '^@@done@@$' $out | sort -u
rm -f $out
