# EVIDENCE-OF: recall --explain states the floors as they are: with
# --no-floor a question below the floor is "<=" it, never "> ... -> kept"
# (issue 33, item 3), and a calibrated floor above the default is told
# apart from the lower bar each hit must pass
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"db","kind":"decision","title":"Durable platform records live in SQLite","body":"Durable platform records live in SQLite; one file per workspace, WAL mode."}' '{"id":"style","kind":"rule","title":"Commit messages","body":"Commit messages say why, in the imperative."}' | cairn import >/dev/null
# below the default floor: nothing without --no-floor ...
$ cairn recall "records in Kafka and zookeeper brokers partition"
~ ^no record answers this \(floor 0\.12; 1 weaker match below it\)$
# ... and with it, the hit is shown as kept by --no-floor, not as above
$ cairn recall --explain --no-floor "records in Kafka and zookeeper brokers partition"
~ \| floor: question 0\.[0-9]+ <= 0\.12 \(default, not calibrated\): not answered; hit 0\.[0-9]+ <= 0\.12 \(each hit: the lower of the floor and 0\.12\) -> kept by --no-floor, relevance 0\.0000$
~ ^floors off \(--no-floor\), in force they would be: floor: 0\.12 \(default, not calibrated\) for the question, each hit above 0\.12; 0 hits dropped by it$
~ --no-floor: the hits are shown whatever it is$
!~ -> kept, 
# no "A > B" in the explanation where A is not above B
$ cairn recall --explain --no-floor "records in Kafka and zookeeper brokers partition" | grep -oE '[0-9]+\.[0-9]+ > [0-9]+\.[0-9]+' | awk '$1 <= $3 { print "false: " $0 }'
# a calibrated floor above the default: the question against it, each
# hit against the default, said as such
$ printf '%s\n' 'platform records for kafka brokers zookeeper offsets' 'records of kafka zookeeper partition brokers' 'platform records kafka' > probes.txt; cairn calibrate --probes probes.txt | head -1
> floor 0.25 from 3 probe questions (median answerability; highest 0.56)
$ cairn recall --explain "Which database should hold the platform's persistent records?" | grep -E '^(floor|   \| floor)' | sed 's/^ *//'
> | floor: question 0.2967 > 0.25 (calibrated): answered; hit 0.2967 > 0.12 (each hit: the lower of the floor and 0.12) -> kept, relevance 0.2008
> floor: 0.25 (calibrated) for the question, each hit above 0.12; 0 hits dropped by it
$ cairn recall --explain --no-floor "records in Kafka and zookeeper brokers partition" | grep -E '^(floor|   \| floor)' | sed 's/^ *//'
> | floor: question 0.1123 <= 0.25 (calibrated): not answered; hit 0.1123 <= 0.12 (each hit: the lower of the floor and 0.12) -> kept by --no-floor, relevance 0.0000
> floors off (--no-floor), in force they would be: floor: 0.25 (calibrated) for the question, each hit above 0.12; 0 hits dropped by it
