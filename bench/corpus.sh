# Sourced by the bench scripts. bench_corpus FILE prints the path of the
# corpus to measure on: FEDTOPIC_BENCH_CORPUS when set, else FILE, which it
# fills with WordNet 3.0's glosses (117,659 documents, about 1.1 million
# tokens after stop words) from Debian's wordnet-base unless FILE already
# holds them, installing the package first when it is missing.
bench_corpus() {
  if [ -n "${FEDTOPIC_BENCH_CORPUS:-}" ]; then
    echo "$FEDTOPIC_BENCH_CORPUS"
    return
  fi
  if [ ! -f /usr/share/wordnet/data.noun ]; then
    echo "installing wordnet-base (Debian) for the WordNet corpus" >&2
    apt-get install -y wordnet-base >/dev/null
  fi
  [ -s "$1" ] || python3 bench/wordnet_glosses.py > "$1"
  echo "$1"
}
