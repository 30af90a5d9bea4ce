# EVIDENCE-OF: issue 33 item 9: `cairn receipt ID` shows each returned record's kind and title,
# not bare ids
$ cairn init >/dev/null && printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS."}' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production database by hand."}' | cairn import >/dev/null
$ cairn recall "which database stores the orders" --json | jq -r .receipt > rid.txt && cairn receipt "$(cat rid.txt)" | grep -c '^  1\. pg  adr  Use PostgreSQL for orders$'
> 1
$ cairn receipt "$(cat rid.txt)" | grep -c '^     bm25 rank 1 '
> 1
