# EVIDENCE-OF: the answerability (share of the question's
# informative IDF mass the best hit matches) decides the floor, apart
# from the ordering; each rule below has its negative control in
# tests/mutate
$ cairn init >/dev/null
# a new workspace with two records: BM25's own idf is ~0 when N = 2, the
# answerability's idf adds background records (NO_BG_DOCS)
$ printf '%s\n' '{"id":"db","kind":"decision","title":"Durable platform records live in SQLite","body":"Durable platform records live in SQLite; one file per workspace, WAL mode."}' '{"id":"style","kind":"rule","title":"Commit messages","body":"Commit messages say why, in the imperative."}' | cairn import >/dev/null
$ cairn recall --json "Which database should hold the platform's persistent records?" | jq -r '.hits[0].record.id'
> db
# ... in Chinese too: 平台, 紀錄 and 持久化 weigh what their glosses can
# match, not their own idf that no English record could reach (NO_GLOSS_MASS)
$ cairn recall --json "平台的持久化紀錄，應該放在哪一種資料庫？" | jq -r '.hits[0].record.id'
> db
$ cairn recall --explain "平台的持久化紀錄，應該放在哪一種資料庫？"
~ matched: .*平台=platform
~ \| answer: 0\.[0-9]+ = matched [0-9.]+ / question [0-9.]+ of IDF mass \(never said in the store: [0-9.]+\)
# off-topic prompts stay quiet, English and Chinese
$ cairn recall --json "How do I feed a sourdough starter?" | jq -c '.hits'
> []
$ cairn recall --json "周末去爬山需要准备哪些装备？" | jq -c '.hits'
> []
# --explain says why: the question's answerability against the floor
$ cairn recall --explain "How do I feed a sourdough starter?"
~ ^answerability: 0\.0000, the best hit's share of the question's informative IDF mass \(1\.0000 of it never said in the store\); answered when above the floor$
# the answerability is reported apart from the ordering's figures
$ cairn recall --json "Which database should hold the platform's persistent records?" | jq -c '[.answer > 0.12, .answer == .hits[0].answer, (.hits[0] | has("lexical"))]'
> [true,true,true]
# a name the store has never heard of (Kafka, mid-sentence) weighs more
# than the same word written as a common one (NO_NAMES)
$ a=$(cairn recall --json --no-floor "records in Kafka" | jq .answer); b=$(cairn recall --json --no-floor "records in kafka" | jq .answer); jq -n "$a < $b"
> true
# a Chinese word the store never says weighs no more than its background
# idf from jieba's dictionary: 需要 (common) less than 吉他 (NO_BACKGROUND)
$ a=$(cairn recall --json --no-floor "平台需要" | jq .answer); b=$(cairn recall --json --no-floor "平台吉他" | jq .answer); jq -n "$a > $b"
> true
# a seeded file's chunks are parts of one document: a question whose words
# its two sections hold between them is answered by the file (each chunk
# scores what the file's chunks match together); another file that holds
# one of the words gets no credit for it (NO_DOC_UNION)
$ git init -q . && git config user.email t@example.com && git config user.name t && mkdir -p docs/decisions
$ f=$(printf 'The team reviewed the options over several weeks and wrote down what each would cost. %.0s' 1 2 3 4 5 6 7); printf '# Field station\n\n## Tanks\n\nThe zebrafish tanks sit in the east wing. %s\n\n## Enclosure\n\nThe quokka enclosure is outside. %s\n' "$f" "$f" > docs/decisions/station.md
$ printf '# Visitors\n\nA quokka photo booth for visitors.\n' > docs/decisions/visitors.md
$ git add docs && git commit -qm docs && cairn seed
> seeded 2 files, 3 records: 3 new, 0 changed, 0 unchanged, 0 retired
$ cairn recall --json --no-floor "zebrafish quokka" | jq -c '[.answer, ([.hits[] | select(.record.source.path == "docs/decisions/station.md") | .answer] | length, min), ([.hits[] | select(.record.source.path == "docs/decisions/visitors.md") | .answer < 0.6] | .[0])]'
> [1,2,1,true]
