# EVIDENCE-OF: near-identical capture candidates (the same
# command shape: one psql per host) become one candidate listing what
# varied, and a session proposes at most 20, so approval stays humane
$ cairn init >/dev/null && for i in $(seq 1 110); do printf '{"time":"2025-06-03T10:%02d:%02dZ","session":"s1","cmd":"psql -h db%d.internal -U app -c \\"select 1\\"","exit":0,"output":"1"}\n' $((i/60)) $((i%60)) $i; done > ops.jsonl && printf '{"time":"2025-06-03T11:00:00Z","session":"s1","cmd":"aws sts get-caller-identity --profile prod","exit":0,"output":"{}"}\n' >> ops.jsonl && cairn capture ops.jsonl | tail -1
> ops.jsonl: 2 proposed (2 new, 0 updated, 0 duplicate, 0 known), 111 commands (0 failed), 110 grouped by command shape
$ cairn candidates --json | jq -r '.[].key' | sort
> capability:aws:auth:prod
> capability:db:postgres:group
$ cairn read capability:db:postgres:group --json | jq -r '.title, .body'
~ ^Connecting to postgres on db1\.internal works from this machine, and 109 more of the same command shape$
~ ^110 commands of the same shape succeeded in one session, for: db1\.internal, db2\.internal, db3\.internal, .*db30\.internal and 80 more\. The first:$
~ ^Connecting to the postgres server on db1\.internal works from this machine
# its proof: the first five commands
$ cairn read capability:db:postgres:group --json | jq -r .proof | grep -c '^\$ psql -h db'
> 5
# the same session again: the same one candidate, nothing new
$ cairn capture ops.jsonl | tail -1
~ 2 proposed \(0 new, 0 updated, 2 duplicate, 0 known\)
# two hosts stay two candidates; other programs of one key shape are not one
$ printf '%s\n' '{"session":"s3","cmd":"mysql -h m1.x -e \"select 1\"","exit":0,"output":"1"}' '{"session":"s3","cmd":"mysql -h m2.x -e \"select 1\"","exit":0,"output":"1"}' '{"session":"s3","cmd":"cargo publish","exit":0,"output":"Uploading"}' '{"session":"s3","cmd":"twine upload dist/x.whl","exit":0,"output":"View at"}' '{"session":"s3","cmd":"mvn deploy","exit":0,"output":"BUILD SUCCESS"}' > few.jsonl && cairn capture --dry-run --json few.jsonl | jq -r '.candidates[].key' | sort
> capability:db:mysql:m1.x
> capability:db:mysql:m2.x
> capability:publish:crates.io
> capability:publish:maven
> capability:publish:pypi
# the cap: forty different commands of one session, twenty candidates
$ n=0; for c in "psql -h a1.x -c 'select 1'" "psql -h a2.x -c 'select 1'" "mysql -h m1.x -e 'select 1'" "mysql -h m2.x -e 'select 1'" "redis-cli -h r1.x ping" "redis-cli -h r2.x ping" "mongosh mongodb://g1.x/db --eval 1" "mongosh mongodb://g2.x/db --eval 1" "ssh deploy@h1.x uptime" "ssh deploy@h2.x uptime" "aws sts get-caller-identity --profile p1" "aws sts get-caller-identity --profile p2" "kubectl get pods --context c1" "kubectl get pods --context c2" "fly deploy -a w1" "fly deploy -a w2" "vercel deploy --prod" "netlify deploy --prod" "npm publish" "cargo publish" "twine upload dist/x" "docker push reg.x/img:1" "gh auth status" "gcloud auth list" "az account show" "terraform apply -auto-approve" "helm upgrade rel1 chart" "helm upgrade rel2 chart" "aws s3 sync . s3://b1" "aws s3 sync . s3://b2" "make test" "npm test" "cargo test" "pytest" "go test ./..." "make build" "npm run build" "cargo build --release" "docker login reg.x" "heroku releases -a app1"; do n=$((n+1)); printf '{"time":"2025-06-03T12:%02d:00Z","session":"s2","cmd":%s,"exit":0,"output":"ok"}\n' $n "$(printf '%s' "$c" | jq -Rs .)"; done > many.jsonl && cairn capture --json many.jsonl | jq -c '.files[0] | {proposed, added, dropped}'
> {"proposed":20,"added":20,"dropped":19}
