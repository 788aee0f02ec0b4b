#!/usr/bin/env bash
# Shows that a refactor of the commands that use trained models changed nothing a user sees: trains
# one tiny model of every kind with OLD_POTOP, then asks both binaries the same questions of each
# and compares the answers byte for byte.
#   scripts/check-same-answers.sh OLD_POTOP NEW_POTOP
# The questions: potop sample (greedy and seeded), potop eval --json, potop attention (the HTML
# page), bert fill, classify predict and attention, translate, info --json (without the fields
# the new binary adds: NEW_INFO_FIELDS), and through potop serve every /v1 endpoint the kind
# answers (completions, chat, responses, attention, fill-mask, embeddings, classify; /v1/models
# without "created") and the 400 of one it does not. One ok/FAIL line per question; exit status 1
# when anything differs.
set -euo pipefail
[ $# = 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 OLD_POTOP NEW_POTOP" >&2; exit 2; }
OLD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
NEW=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
NEW_INFO_FIELDS=${NEW_INFO_FIELDS:-tasks}
POTOP=$OLD  # lib.sh: a temporary directory, make_corpus, make_pairs, make_labelled, ok / fail / finish
source "$(dirname "$0")/../tests/cli/lib.sh"

make_corpus text.txt 1500
make_pairs pairs.tsv 300
make_labelled labelled.tsv 200 1
make_labelled dev.tsv 40 2
train() {  # train <dir> <potop args>...
  local dir=$1
  shift
  "$OLD" "$@" --out "$dir" >/dev/null 2>"$dir.log" || { cat "$dir.log" >&2; fail "training $dir"; finish; }
}
train gpt train --data text.txt "${TINY[@]}" --steps 30 --eval-interval 15
train llama train --arch llama --data text.txt "${TINY[@]}" --n-kv-head 1 --steps 30 --eval-interval 15
train bow bow train --data text.txt "${TINY_BOW[@]}" --steps 30 --eval-interval 15
train mt translate train --data pairs.tsv "${TINY_TRANSLATE[@]}" --steps 30 --eval-interval 15
text_bpe
train bert bert pretrain --data text.txt --tokenizer pretrain-tokenizer "${TINY[@]}" --steps 30 --eval-interval 15
train cls classify train --data labelled.tsv --dev dev.tsv --n-layer 1 --n-head 2 --n-embd 16 --block-size 24 --batch-size 8 \
  --threads 1 --min-count 1 --epochs 1 --eval-interval 10

# same <name> <potop args>...: both binaries' stdout, stderr (checkpoint paths are the same) and
# exit status must be the same bytes, but for timings. Files a command writes go to old-*/new-* names by $OUT.
same() {
  local name=$1
  shift
  local o n
  o=$(OUT=old "$OLD" "${@//@OUT@/old}" 2>&1; echo "exit $?") || true
  n=$(OUT=new "$NEW" "${@//@OUT@/new}" 2>&1; echo "exit $?") || true
  n=${n//new./old.}
  n=${n//-new/-old}
  # Timings differ run to run.
  local timings='s/[0-9.]+ s, [0-9]+ tokens\/s/TIME/g; s/[0-9.]+ tokens\/s/TIME/g; s/"([a-z_]*seconds|[a-z_]*tokens_per_s)":[0-9.e+-]+/"\1":TIME/g'
  o=$(sed -E "$timings" <<<"$o"); n=$(sed -E "$timings" <<<"$n")
  if [ "$o" = "$n" ]; then ok "$name ($(wc -c <<<"$o") bytes)"; else fail "$name: $(diff <(echo "$o") <(echo "$n") | head -5)"; fi
}
# same_file <name> <file written by old> <by new>
same_file() {
  if cmp -s "$2" "$3"; then ok "$1 ($(wc -c <"$2") bytes)"; else fail "$1: $2 and $3 differ"; fi
}

for m in gpt llama bow mt bert cls; do
  info() { "$1" info -m "$m" --json | /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); [j.pop(k, None) for k in '$NEW_INFO_FIELDS'.split()]; print(json.dumps(j, sort_keys=True))"; }
  if [ "$(info "$OLD")" = "$(info "$NEW")" ]; then ok "$m: info --json"; else fail "$m: info --json differs"; fi
done
same "gpt: sample, greedy" sample -m gpt -p "pan " -n 40 --temperature 0
same "gpt: sample, seeded" sample -m gpt -p "pan " -n 40 --seed 3 --num-samples 2 --json
same "llama: sample, greedy" sample -m llama -p "pan " -n 40 --temperature 0
same "llama: sample, seeded" sample -m llama -p "pan " -n 40 --seed 3 --num-samples 2 --json
same "gpt: eval" eval -m gpt --data text.txt --json
same "llama: eval" eval -m llama --data text.txt --json
same "bow: eval" eval -m bow --data text.txt --json
same "mt: eval" eval -m mt --json
same "bert: eval" eval -m bert --data text.txt --json
same "cls: eval refused" eval -m cls --data text.txt
printf 'a b c\nb c d a\n' >sentences.txt
printf 'dobry kmicic\nzły pan\n' >texts.txt
same "mt: translate, greedy" translate -m mt --input sentences.txt
same "mt: translate, beam" translate -m mt --input sentences.txt --beam 3
same "bert: fill" bert fill -m bert -p "pan [MASK] ruszył"
same "cls: predict" classify predict -m cls --input texts.txt --json
for m in gpt llama bow mt bert cls; do
  same "$m: attention" attention -m "$m" -p "pan kmicic ruszył" --out "$m-@OUT@.html"
  same_file "$m: attention page" "$m-old.html" "$m-new.html"
done
same "cls: classify attention" classify attention -m cls "dobry kmicic" --html cls-att-@OUT@.html
same_file "cls: classify attention page" cls-att-old.html cls-att-new.html
same "gpt: export gguf" export -m gpt --format gguf --out gpt-@OUT@.gguf --type q8_0
same_file "gpt: the GGUF file" gpt-old.gguf gpt-new.gguf
same "llama: export gguf" export -m llama --format gguf --out llama-@OUT@.gguf --type f32
same_file "llama: the GGUF file" llama-old.gguf llama-new.gguf
for m in gpt llama; do
  same "$m: export hf" export -m "$m" --format hf --out "$m-hf-@OUT@"
  for f in "$m-hf-old"/*; do same_file "$m: the HF export's $(basename "$f")" "$f" "$m-hf-new/$(basename "$f")"; done
done
same "bow: export refused" export -m bow --format gguf --out bow.gguf

# The answers of potop serve: every endpoint of the API, for each kind, from both binaries.
ask() {  # ask <binary> <model> <out file>
  local log=serve-$2.log
  POTOP=$1 start_serve "$log" -m "$2" --threads 1
  /usr/bin/python3 - "$PORT" "$3" <<'PY'
import json, sys, urllib.request
port, out = sys.argv[1], sys.argv[2]
def call(method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:  # fields that differ run to run: ids of answers, times
        j = json.loads(text)
        for k in ("id", "created", "created_at", "system_fingerprint"):
            if isinstance(j, dict): j.pop(k, None)
        for d in (j.get("data", []) if isinstance(j, dict) else []):
            if isinstance(d, dict): d.pop("created", None)
        text = json.dumps(j, sort_keys=True)
    except ValueError:
        pass
    return f"{method} {path} {status} {text}"
lines = [call("GET", "/v1/models"),
         call("POST", "/v1/completions", {"prompt": "pan ", "max_tokens": 12, "temperature": 0, "logprobs": 2, "seed": 1}),
         call("POST", "/v1/completions", {"prompt": "pan ", "max_tokens": 12, "seed": 5}),
         call("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "a b c"}], "max_tokens": 8, "temperature": 0, "seed": 1}),
         call("POST", "/v1/responses", {"input": "a b c", "max_output_tokens": 8, "temperature": 0, "seed": 1}),
         call("POST", "/v1/attention", {"text": "pan kmicic"}),
         call("GET", "/v1/attention?text=dobry%20kmicic"),
         call("POST", "/v1/fill-mask", {"text": "pan [MASK] ruszył", "top_k": 3}),
         call("POST", "/v1/embeddings", {"input": ["pan kmicic", "ruszył"]}),
         call("POST", "/v1/embeddings", {"input": "pan", "encoding_format": "base64"}),
         call("POST", "/v1/embeddings", {"input": "pan", "dimensions": 3}),
         call("POST", "/v1/classify", {"input": ["dobry kmicic", "zły"]})]
open(out, "w").write("\n".join(lines) + "\n")
PY
  kill "$SERVER_PID" && wait "$SERVER_PID" || true
}
for m in gpt llama mt bert cls; do
  ask "$OLD" "$m" "$m-api-old.txt"
  ask "$NEW" "$m" "$m-api-new.txt"
  if cmp -s "$m-api-old.txt" "$m-api-new.txt"; then ok "$m: /v1 answers ($(wc -l <"$m-api-old.txt") requests)"
  else fail "$m: /v1 answers differ: $(diff "$m-api-old.txt" "$m-api-new.txt" | head -4 | cut -c1-300)"; fi
done
finish
