# EVIDENCE-OF: a word written with its number attached (EMNLP2022,
# python3) and the same word spaced from it (EMNLP 2022, Python 3) meet in
# recall: the tokenizer splits at a change between letters and digits and
# keeps the whole word too (tests/mutate: NO_DIGIT_SPLIT)
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"venue","kind":"fact","title":"Conference venue","body":"EMNLP 2022 was held in Abu Dhabi."}' '{"id":"other","kind":"fact","title":"Conference dates","body":"The 2021 meeting was held online; the deadline moved twice."}' '{"id":"py","kind":"fact","title":"Runtime","body":"The importer runs on Python 3 only."}' '{"id":"db","kind":"fact","title":"Database","body":"Orders live in PostgreSQL on RDS."}' | cairn import >/dev/null
$ cairn recall --json "where was EMNLP2022 held?" | jq -r '.hits[0].record.id'
> venue
$ cairn recall --json --no-floor "EMNLP2022的举办地" | jq -r '.hits[0].record.id'
> venue
$ cairn recall --json "does the importer need python3?" | jq -r '.hits[0].record.id'
> py
# the joined form is one token too, so it still finds itself
$ cairn write --kind fact --title "Tokenizer" "We pinned utf8proc at 2.8." >/dev/null
$ cairn recall --json "utf8proc" | jq -r '.hits[0].record.title'
> Tokenizer
$ cairn recall --explain "EMNLP2022" | grep "^terms searched"
> terms searched: emnlp emnlp2022 2022
