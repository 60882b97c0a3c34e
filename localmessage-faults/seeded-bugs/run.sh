#!/usr/bin/env bash
# Seeded-bug check of the fault suite: injects one small engine bug at a time into a temporary
# copy of HEAD, runs the short PostgreSQL fault run against it and expects it to FAIL.
#
#   localmessage-faults/seeded-bugs/run.sh            # every bug class
#   localmessage-faults/seeded-bugs/run.sh cas inbox  # some of them
#
# Each injection is a perl substitution that must match exactly as often as stated, or the script
# stops: a pattern that no longer matches the engine means the injection must be rewritten, not
# that the suite caught nothing. The database server is not restarted by these runs
# (-Dlm.faults.noRestart=true; set LM_SEEDED_RESTART=true to include the restart).
# Needs what the fault suite needs: PostgreSQL and MariaDB as in the project's test setup.
set -euo pipefail

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lm-seeded-XXXXXX")
COPY="$WORK/repo"
RESTART=${LM_SEEDED_RESTART:-false}
TEST='FaultSuiteTest#nothingLostNothingAppliedTwiceOnPostgres'

cleanup() {
  git -C "$ROOT" worktree remove --force "$COPY" >/dev/null 2>&1 || true
  echo "logs kept in $WORK"
}
trap cleanup EXIT
git -C "$ROOT" worktree add --quiet --detach "$COPY" HEAD

CORE=localmessage-core/src/main/java/io/localmessage
PG=$CORE/internal/dialect/PostgresDialect.java
ENGINE=$CORE/internal/engine

# inject FILE EXPECTED_MATCHES PERL_SUBSTITUTION
inject() {
  local file=$1 expected=$2 subst=$3
  N="$expected" perl -0 -i -pe "\$n += ($subst); END { exit(\$n == \$ENV{N} ? 0 : 3) }" \
    "$COPY/$file" || {
    echo "INJECTION DID NOT APPLY to $file (expected $expected matches): $subst" >&2
    exit 2
  }
}

seed() {
  case $1 in
    cas) # write-back without the version check
      inject "$PG" 2 's/ AND t\.version = c\.v AND t\.status = 0";/ AND t.status = 0";/g' ;;
    live-lease) # the claim takes tickets whose lease still has up to 6 s to run
      inject "$PG" 1 's/\.append\(Predicates\.due\(this, "m"\)\);/.append(Predicates.due(this, "m").replace("<= ", "- interval '"'"'6 seconds'"'"' <= "));/g' ;;
    attempts) # attempts not incremented at claim
      inject "$PG" 1 's/ t SET attempts = t\.attempts \+ 1, version/ t SET attempts = t.attempts, version/g' ;;
    drop-success) # the writer silently drops 1% of success write-backs
      inject "$ENGINE/WriteBehind.java" 1 's/(\n  void submit\(WriteItem item\) \{\n)/$1    if (item.isDelete() \&\& java.util.concurrent.ThreadLocalRandom.current().nextInt(100) == 0) {\n      item.onWritten().run();\n      return;\n    }\n/g' ;;
    timeout-overlap) # on a timeout the watchdog writes the retry while the handler's thread is
      # still inside (the engine before the fix): the retry can start next to the running handler
      inject "$ENGINE/Executions.java" 1 's/(        if \(e\.timeOut\(\)\) \{\n)/$1          if (e.abandonIfInside()) {\n            outcomes.decided(e, java.util.Collections.nCopies(e.messages.size(), io.localmessage.Outcome.retry("timed out")), Execution.Ending.TIMED_OUT, java.time.Duration.ZERO);\n          }\n/g' ;;
    close-releases) # close() releases the leases of handlers still running
      inject "$ENGINE/Outcomes.java" 1 's/(OutcomePolicy\.MAX_ERROR_LENGTH\),\n\s*-1,\n\s*)true\)/$1false)/g' ;;
    inbox) # the Kafka consumer skips the inbox check
      inject localmessage-kafka/src/main/java/io/localmessage/kafka/internal/Applier.java 1 \
        's/if \(!first\[k - i\] \|\| !fresh\.contains\(ids\.get\(k\)\)\) \{/if (false) {/g' ;;
    *) echo "unknown bug class $1" >&2; exit 2 ;;
  esac
}

ALL=(cas live-lease attempts drop-success timeout-overlap close-releases inbox)
BUGS=("$@")
[ $# -eq 0 ] && BUGS=("${ALL[@]}")
if [ "${LM_SEEDED_DRY:-false}" = true ]; then
  # only check that every injection applies and that all of them together compile
  git -C "$COPY" checkout --quiet -- .
  for bug in "${BUGS[@]}"; do seed "$bug"; done
  git -C "$COPY" diff --stat
  (cd "$COPY" && ./mvnw -B -q -pl localmessage-core,localmessage-kafka -am compile)
  echo "all injections apply and compile"
  exit 0
fi
declare -A CAUGHT WHICH
for bug in "${BUGS[@]}"; do
  git -C "$COPY" checkout --quiet -- .
  seed "$bug"
  echo "=== $bug: $(git -C "$COPY" diff --stat | tail -1)"
  log="$WORK/$bug.log"
  for try in 1 2; do
    set +e
    (cd "$COPY" && timeout 1200 ./mvnw -B -pl localmessage-faults -am test -Dtest="$TEST" \
      -Dsurefire.failIfNoSpecifiedTests=false -Dlm.faults.noRestart=$([ "$RESTART" = true ] && echo false || echo true) \
      >"$log" 2>&1)
    rc=$?
    set -e
    # caught = an assertion of the suite failed; an error (a broker that did not start on a busy
    # machine, a timeout) proves nothing either way: run once more, then call it inconclusive
    if grep -q 'COMPILATION ERROR' "$log"; then
      CAUGHT[$bug]="INJECTION DID NOT COMPILE"
    elif [ $rc -ne 0 ] && grep -q 'Tests run:.*Failures: [1-9]' "$log"; then
      CAUGHT[$bug]=yes
    elif [ $rc -ne 0 ]; then
      CAUGHT[$bug]="inconclusive (rc=$rc: $(grep -m1 -o '» .*' "$log" | cut -c1-120)), see $log"
      if [ "$try" = 1 ]; then
        echo "    ${CAUGHT[$bug]}; once more"
        mv "$log" "$log.try1"
        continue
      fi
    else
      CAUGHT[$bug]=NO
    fi
    break
  done
  # the soft assertions' descriptions of what failed, once each
  WHICH[$bug]=$(grep -o '^\[[^]]*\] *$' "$log" | grep -v '^\[\(ERROR\|INFO\|WARNING\)\]' \
    | sed 's/ *$//' | sort -u | paste -sd ';' - || true)
  echo "    caught: ${CAUGHT[$bug]}  ${WHICH[$bug]}"
done

printf '\n| bug | caught? | which assertions failed |\n| --- | --- | --- |\n'
for bug in "${BUGS[@]}"; do
  printf '| %s | %s | %s |\n' "$bug" "${CAUGHT[$bug]}" "${WHICH[$bug]:-}"
done
