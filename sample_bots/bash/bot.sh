#!/usr/bin/env bash
# UNO Arena sample bot in plain bash, behind the stdio-json bridge (bot.toml: protocol =
# "stdio-json"). Every message from the referee arrives on stdin as one line of JSON (the
# protobuf JSON mapping of PlayResponse); for every line with a "decisionRequest" we print
# one line: {"requestId": "<its id>", "actionIndex": <index into legalActions>}.
# Logs go to stderr; stdout is for decisions only.
#
# Strategy (the arena's "greedy"): play the first playable card (the referee lists plays
# first, wilds last among them, then DRAW / KEEP), name the colour held most, never
# challenge a Wild Draw Four. Under the house rules (bot.toml's variants, docs/rules.md §21-§32):
# stack or deflect a pending penalty with the first card offered, else accept; jump in
# whenever asked; take the first choice offered for a seat (pass on an exchange) and give
# the first card listed.

# The index of the first legal action whose JSON text contains $2, in the legalActions of $1
# (every action starts with {"kind": "ACTION_KIND_...}); 0 when none does.
index_of() {
  local legal=${1#*\"legalActions\": [} i
  local IFS=$'\x01'
  local -a actions
  read -r -a actions <<< "${legal//\{\"kind\": \"ACTION_KIND_/$'\x01'}"
  for ((i = 1; i < ${#actions[@]}; i++)); do
    if [[ ${actions[i]} == *"$2"* ]]; then
      echo $((i - 1))
      return
    fi
  done
  echo 0
}

# How many times $2 occurs in $1.
count() {
  local rest=${1//"$2"/}
  echo $(((${#1} - ${#rest}) / ${#2}))
}

most_held_colour() {
  local hand="" best=COLOUR_RED best_count=-1 colour n
  if [[ $1 == *'"hand": ['* ]]; then
    hand=${1#*\"hand\": [}
    hand=${hand%%\"topCard\"*}
  fi
  for colour in COLOUR_RED COLOUR_YELLOW COLOUR_GREEN COLOUR_BLUE; do
    n=$(count "$hand" "$colour")
    if ((n > best_count)); then
      best=$colour
      best_count=$n
    fi
  done
  echo "$best"
}

while IFS= read -r line; do
  case $line in
    *'"decisionRequest": '*) ;;
    *'"matchStart": '*) echo "match start: $line" | cut -c1-200 >&2; continue ;;
    *'"matchEnd": '*) echo "match end: ${line#*\"matchEnd\": }" >&2; break ;;
    *) continue ;;
  esac
  request=${line#*\"decisionRequest\": }  # skip the events
  [[ $request =~ \"requestId\":\ \"([0-9]+)\" ]] && id=${BASH_REMATCH[1]}
  case $request in
    *DECISION_KIND_CHOOSE_COLOUR*)
      index=$(index_of "$request" "$(most_held_colour "$request")") ;;
    *DECISION_KIND_CHALLENGE_OR_ACCEPT*)
      index=$(index_of "$request" 'ACCEPT"') ;;
    *DECISION_KIND_STACK_OR_ACCEPT*)
      # a card first in the list passes the penalty on; otherwise accept (never challenge)
      if [[ ${request#*\"legalActions\": [} == '{"kind": "ACTION_KIND_PLAY"'* ]]; then
        index=0
      else
        index=$(index_of "$request" 'ACCEPT"')
      fi ;;
    *)
      index=0 ;;  # the first playable card, or DRAW / KEEP when nothing plays; jump in;
                  # pass on an exchange (a 7's swap: the first seat); the first card to give
  esac
  printf '{"requestId": "%s", "actionIndex": %d}\n' "$id" "$index"
done
