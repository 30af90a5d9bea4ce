# EVIDENCE-OF: SPEC 4.6 -- a secret is refused (or masked), never stored
$ cairn init >/dev/null
$ cairn write --kind capability "deploy works with AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9fAkEy3 set"
? 1
e~ secret
$ cairn write "clone with https://deploy:s3cr3tPassw0rd@git.example.com/repo.git"
? 1
e~ password-in-url
# nothing of the refused secret is anywhere in .cairn (db, wal, shm)
$ grep -rl "wJalrXUtnFEMI" .cairn; grep -rl "s3cr3tPassw0rd" .cairn; echo done
> done
$ cairn list --status all --json | jq length
> 0
$ cairn write --redact "token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 works" --json | jq -r .id | xargs cairn get --json | jq -r .body
~ ^token \[REDACTED:[a-z-]+\] works$
$ grep -rl "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5" .cairn; echo done
> done
# innocents pass: a git SHA and a UUID
$ cairn write "fixed in 3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39, ticket 123e4567-e89b-12d3-a456-426614174000" --json | jq -r .status
> accepted
# import is a write path too
$ printf '%s\n' '{"kind":"fact","body":"key AKIAIOSFODNN7EXAMPLF is ours"}' > in.jsonl; cairn import in.jsonl
? 1
e~ line 1: import: .*aws
# provenance fields are write paths too
$ cairn write --tool "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5" "ran the deploy"
? 1
e~ github
$ cairn write --session "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx" --redact "ran the deploy"
? 1
e~ slack
