#!/usr/bin/env bash
# The fastText reference of docs/transfer.md: Debian's fastText 0.9.2, supervised, on SST-2 and
# TREC (../shared/data/classify/{sst2,trec}-{train,dev}.tsv, "label<TAB>text" a line), with the
# issue's settings -wordNgrams 2 -epoch 25 -lr 0.5 -dim 50, seeds 1, 2 and 3, one thread (the
# only way fastText's training is reproducible). Prints one JSON line per task, then a table:
# dev accuracy, mean and sample standard deviation over the seeds.
#
#   bash bench/fasttext_classify.sh
#
# The texts are given as the files hold them (already tokenized; SST-2 lowercased, TREC not).
# Accuracy is counted here from `fasttext predict` (top label vs the gold one), with full
# precision; `fasttext test` prints the same number as P@1, rounded to 3 digits.
# Skips (exit 0) without ../shared/data/classify; a line without a tab is an error (exit 1).
set -euo pipefail
cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/.."
data=../shared/data/classify
if [ ! -d "$data" ]; then
  echo "fasttext_classify: skipped: no $data"
  exit 0
fi
if ! command -v fasttext >/dev/null; then
  echo "fasttext_classify: no fasttext on PATH: run scripts/setup.sh --all" >&2
  exit 1
fi
settings=(-wordNgrams 2 -epoch 25 -lr 0.5 -dim 50)
seeds=(1 2 3)
version=$(dpkg-query -W -f='${Version}' fasttext 2>/dev/null || echo unknown)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# to_fasttext TSV LABELS TEXTS: "__label__X text" lines to LABELS (for training) and the bare
# texts to TEXTS (for predict), in the file's order.
to_fasttext() {
  awk -F'\t' -v file="$1" -v labelled="$2" -v texts="$3" '
    NF < 2 || $1 == "" { printf "fasttext_classify: %s:%d: expected label<TAB>text\n", file, NR > "/dev/stderr"; exit 1 }
    { text = substr($0, length($1) + 2); print "__label__" $1 " " text > labelled; print text > texts }' "$1"
}

rows=()
for task in sst2 trec; do
  for split in train dev; do
    to_fasttext "$data/$task-$split.tsv" "$tmp/$task-$split.ft" "$tmp/$task-$split.txt"
  done
  cut -f1 "$data/$task-dev.tsv" | sed 's/^/__label__/' >"$tmp/gold"
  accuracies=()
  start=$(date +%s.%N)
  for seed in "${seeds[@]}"; do
    fasttext supervised -input "$tmp/$task-train.ft" -output "$tmp/model" "${settings[@]}" \
      -seed "$seed" -thread 1 -verbose 0
    fasttext predict "$tmp/model.bin" "$tmp/$task-dev.txt" 1 >"$tmp/predicted"
    # A text fastText reads as empty gets no prediction line: the counts must match.
    if [ "$(wc -l <"$tmp/predicted")" != "$(wc -l <"$tmp/gold")" ]; then
      echo "fasttext_classify: $task: fasttext predicted $(wc -l <"$tmp/predicted") of $(wc -l <"$tmp/gold") dev texts" >&2
      exit 1
    fi
    accuracies+=("$(paste -d' ' "$tmp/gold" "$tmp/predicted" | awk '$1 == $2 { right++ } END { printf "%.6f", right / NR }')")
    rm -f "$tmp/model.bin" "$tmp/model.vec"  # 400 MB each: 2M hashed bigram buckets x dim 50
  done
  seconds=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
  read -r mean sd < <(printf '%s\n' "${accuracies[@]}" |
    awk '{ x[NR] = $1; s += $1 } END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2; printf "%.6f %.6f\n", m, (NR > 1 ? sqrt(v / (NR - 1)) : 0) }')
  printf '{"bench": "fasttext_classify", "task": "%s", "fasttext": "%s", "settings": "%s -thread 1", "train": %d, "dev": %d, "seeds": [%s], "dev_accuracy": [%s], "mean": %s, "sd": %s, "seconds": %s}\n' \
    "$task" "$version" "${settings[*]}" "$(wc -l <"$tmp/$task-train.txt")" "$(wc -l <"$tmp/$task-dev.txt")" \
    "$(IFS=,; echo "${seeds[*]}" | sed 's/,/, /g')" "$(IFS=,; echo "${accuracies[*]}" | sed 's/,/, /g')" "$mean" "$sd" "$seconds"
  rows+=("$(printf '%-5s %6d %5d   %s   %5.1f%% ± %.1f' "$task" "$(wc -l <"$tmp/$task-train.txt")" \
    "$(wc -l <"$tmp/$task-dev.txt")" "$(printf '%s ' "${accuracies[@]}" | awk '{ for (i = 1; i <= NF; i++) printf "%5.1f%% ", 100 * $i }')" \
    "$(awk -v m="$mean" 'BEGIN { print 100 * m }')" "$(awk -v s="$sd" 'BEGIN { print 100 * s }')")")
done
echo
echo "fastText $version supervised, ${settings[*]} -thread 1; dev accuracy, seeds ${seeds[*]}"
printf '%-5s %6s %5s   %-21s   %s\n' task train dev "per seed" "mean ± sd"
printf '%s\n' "${rows[@]}"
