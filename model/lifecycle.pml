/*
 * lifecycle.pml: a model of the localmessage ticket lifecycle, checked by SPIN.
 *
 * Two replicas run one engine each (EngineLoops, one execution slot); the table local_message is a
 * set of arrays that every actor changes only in atomic steps, each standing for one SQL statement.
 * Time is a logical clock: row due times and leases are kept as "ticks left", and the Clock
 * process makes one tick pass for everyone. See README.md for what is abstracted away.
 *
 * Default: the fixed design. Switches (spin -D...): TODAY (the design on main before the fix),
 * and one per known way to break it: MUTANT_TIMEOUT_AT_ONCE, MUTANT_NO_VERSION_CHECK,
 * MUTANT_SWEEP_IGNORES_LEASE, MUTANT_CANCEL_IN_FLIGHT, MUTANT_SHUTDOWN_RELEASES_RUNNING.
 */

#ifndef NT
#define NT 2          /* tickets: 0 and 1 are one ordered aggregate (0 is its head); -DNT=3 adds
                         ticket 2, which is on its own */
#endif
#define NR 2          /* replicas */
#define MAXA 2        /* max_attempts */
#define LEASE 2       /* lease length, in ticks */
#define BACKOFF 1     /* retry delay, in ticks */
#define NONE 255

/* status column */
#define PENDING 0
#define SUCCEEDED 1   /* also stands for "deleted on success" */
#define DEAD 2
#define CANCELED 3

/* Outcomes.decided: the one outcome of an execution */
#define O_NONE 0
#define O_SUCCESS 1     /* Outcome.success() */
#define O_RETRY 2       /* Outcome.retry(...) or the watchdog's "retry: timeout" */
#define O_PERMANENT 3   /* PermanentFailure */
#define O_RELEASE 4     /* left the handler when shutdown interrupted it: give the attempt back */
#define O_ABANDONED 5   /* shutdown gave up on a thread still inside: nothing to write */
#define O_DONE 6        /* the writer wrote it, or dropped it */

/* ---- which design: TODAY switches on everything the fix removes ---- */
#ifdef TODAY
#define TIMEOUT_AT_ONCE
#define CANCEL_IN_FLIGHT
#define SHUTDOWN_RELEASES_RUNNING
#define SHUTDOWN_KEEPS_ATTEMPT
#define NO_RENEWAL
#endif
#ifdef MUTANT_TIMEOUT_AT_ONCE
#define TIMEOUT_AT_ONCE
#endif
#ifdef MUTANT_NO_VERSION_CHECK
#define NO_VERSION_CHECK
#endif
#ifdef MUTANT_SWEEP_IGNORES_LEASE
#define SWEEP_IGNORES_LEASE
#endif
#ifdef MUTANT_CANCEL_IN_FLIGHT
#define CANCEL_IN_FLIGHT
#endif
#ifdef MUTANT_SHUTDOWN_RELEASES_RUNNING
#define SHUTDOWN_RELEASES_RUNNING
#endif

/* ---- the table: one row per ticket ---- */
byte status[NT];      /* all PENDING: every ticket is committed at the start */
byte attempts[NT];
byte due[NT];         /* next_retry_at - now, in ticks (0 = due); while claimed: the lease end */
bool owned[NT];       /* lease_owner IS NOT NULL */
bool paused;          /* local_message_control: the (single) biz type is paused */

/* ---- each replica's one execution slot (Execution) ---- */
byte et[NR];          /* ticket of the execution, NONE = slot free */
bool cur[NR];         /* the row's version is still the one the claim returned (the CAS fence) */
bool inside[NR];      /* the worker thread is inside the handler */
byte decided[NR];     /* Outcomes.decided */
bool early[NR];       /* the outcome went to the writer while the thread was still inside */
bool fenced[NR];      /* a renewal found the version changed: the outcome will be dropped */
bool capped[NR];      /* renewed up to the hard cap (maxExecutionTime): no more renewals */
byte gl[NR];          /* ghost: ticks left of the lease this execution was granted */
bool closed[NR];      /* EngineLoops.close() has begun: no claims, no renewals */
bool waited[NR];      /* close() has passed its wait for handlers */
bool frozen[NR];      /* SIGSTOP: takes no step, renews nothing */
bool crashed[NR];     /* kill -9: gone for good */

/* ---- ghosts for the properties ---- */
bool succeededOnce[NT];
bool canceledOnce[NT];

/* ---- fault and operator budgets (bounded, so they stop: liveness is "once faults stop") ---- */
#ifndef FREEZES
#define FREEZES 1
#endif
#ifndef EXITS
#define EXITS 1
#endif
#ifndef CANCELS
#define CANCELS 1
#endif
#ifndef REQUEUES
#define REQUEUES 1
#endif
#ifndef PAUSES
#define PAUSES 1
#endif
byte freezes = FREEZES; /* SIGSTOP/SIGCONT of some replica */
byte exits = EXITS;     /* a replica leaves: kill -9 or a shutdown (the other keeps working) */
byte cancels = CANCELS;
byte requeues = REQUEUES;
byte pauses = PAUSES;

#define UP(r) (!frozen[r] && !crashed[r])
#define TERMINAL(t) (status[t] == SUCCEEDED || status[t] == DEAD || status[t] == CANCELED)
/* the ordered aggregate: ticket 1 waits until ticket 0 is neither PENDING nor DEAD */
#define ORDER_OK(t) (t != 1 || (status[0] != PENDING && status[0] != DEAD))
#define CLAIMABLE(t) (status[t] == PENDING && due[t] == 0 && attempts[t] < MAXA && ORDER_OK(t))
/* a live lease as the database sees it (the cancel check of the fixed design) */
#define LIVE_LEASE(t) (status[t] == PENDING && due[t] > 0 && owned[t])

#ifdef NO_VERSION_CHECK
#define CAS_OK(r) (status[et[r]] == PENDING)
#else
#define CAS_OK(r) (cur[r] && status[et[r]] == PENDING)
#endif

#ifdef SWEEP_IGNORES_LEASE
#define SWEEPABLE(t) (status[t] == PENDING && attempts[t] >= MAXA)
#else
#define SWEEPABLE(t) (status[t] == PENDING && attempts[t] >= MAXA && due[t] == 0)
#endif

#ifdef CANCEL_IN_FLIGHT
#define CANCELABLE(t) (status[t] == PENDING || status[t] == DEAD)
#else
#define CANCELABLE(t) ((status[t] == PENDING || status[t] == DEAD) && !LIVE_LEASE(t))
#endif

/* a thread inside the handler that the replica keeps renewing the lease for */
#ifdef NO_RENEWAL
#define RENEWING(r) false
#else
#define RENEWING(r) (UP(r) && inside[r] && !closed[r] && !capped[r] && !fenced[r])
#endif

/* the writer may take the outcome: after the thread left (fixed), or at once (TIMEOUT_AT_ONCE) */
#define READY(r) (decided[r] >= O_SUCCESS && decided[r] <= O_RELEASE && (!inside[r] || early[r]))

/* frees the slot once the thread has left and the outcome is settled (the task of Executions that ran it) */
inline printOutcome(o) {
  if
  :: o == O_SUCCESS -> printf("success")
  :: o == O_RETRY -> printf("retry")
  :: o == O_RELEASE -> printf("release (interrupted by close)")
  :: else -> printf("?")
  fi
}

inline freeIfDone(r) {
  if
  :: !inside[r] && (decided[r] == O_DONE || decided[r] == O_ABANDONED) ->
     et[r] = NONE; cur[r] = false; decided[r] = O_NONE; early[r] = false;
     fenced[r] = false; capped[r] = false; gl[r] = 0
  :: else -> skip
  fi
}

/* version = version + 1 on row t: every execution that claimed an older version is now stale.
   (The model keeps only this comparison, not the number, so equal states stay equal.) */
inline bumpVersion(t) {
  if :: et[0] == t -> cur[0] = false :: else -> skip fi;
  if :: et[1] == t -> cur[1] = false :: else -> skip fi
}

/* one successful transition of row t: every transition bumps the version, clears the owner */
inline transition(t, st) {
  status[t] = st; bumpVersion(t); owned[t] = false;
  if :: st != PENDING -> due[t] = 0 :: else -> skip fi
}

/*
 * ==== One replica: an engine (EngineLoops) with one execution slot ====
 * Its threads (poller, worker, write-behind, watchdog/renewal timer) are the options of one
 * process: each option is one atomic step of one thread. Weak fairness per replica is enough,
 * because every option except "the handler returns" can happen only finitely often per ticket
 * (renewals stop at the hard cap), so a replica that keeps running must eventually return.
 */
proctype Replica(byte r) {
  byte t;
  do
  /* poller: Claimer.claim -> Dialect.claim. A free slot, a due ticket, FOR UPDATE SKIP
     LOCKED, attempts counted at claim, lease = now + LEASE; Executions.start starts the worker
     thread at once (claim and entering the handler are one step) */
  :: atomic {
       if
       :: UP(r) && !closed[r] && et[r] == NONE && !paused && CLAIMABLE(0) -> t = 0
       :: UP(r) && !closed[r] && et[r] == NONE && !paused && CLAIMABLE(1) -> t = 1
#if NT > 2
       :: UP(r) && !closed[r] && et[r] == NONE && !paused && CLAIMABLE(2) -> t = 2
#endif
       fi;
       if :: succeededOnce[t] || canceledOnce[t] ->
             printf("@ VIOLATED: ticket %d starts again after SUCCEEDED or CANCELED\n", t)
          :: else -> skip fi;
       assert(!succeededOnce[t]);  /* never re-run after SUCCEEDED */
       assert(!canceledOnce[t]);   /* a canceled ticket never starts again */
       attempts[t]++; bumpVersion(t); due[t] = LEASE; owned[t] = true;
       et[r] = t; cur[r] = true; gl[r] = LEASE; inside[r] = true; decided[r] = O_NONE;
       printf("@ replica %d claims ticket %d (attempt %d, lease %d ticks) and enters the handler\n",
         r, t, attempts[t], LEASE);
       t = 0
     }
  /* poller: Maintenance.maintain -> MessageQueue.expireExhausted. A last attempt whose lease
     ended without an outcome -> DEAD */
  :: atomic {
       if
       :: UP(r) && !closed[r] && SWEEPABLE(0) -> t = 0
       :: UP(r) && !closed[r] && SWEEPABLE(1) -> t = 1
#if NT > 2
       :: UP(r) && !closed[r] && SWEEPABLE(2) -> t = 2
#endif
       fi;
       transition(t, DEAD);
       printf("@ replica %d sweep: ticket %d exhausted -> DEAD\n", r, t);
       t = 0
     }
  /* worker: Execution.run. The handler returns or throws (PermanentFailure is left out: its
     row transition, DEAD, is the one of an exhausted retry). If the watchdog decided first,
     Outcomes.decided keeps that outcome. Then Executions gives the slot back */
  :: atomic {
       UP(r) && inside[r] ->
       inside[r] = false;
       if
       :: decided[r] == O_NONE ->
          if
          :: decided[r] = O_SUCCESS
          :: decided[r] = O_RETRY
#ifndef SHUTDOWN_KEEPS_ATTEMPT
          :: closed[r] -> decided[r] = O_RELEASE  /* interrupted by close(): attempt given back */
#endif
          fi;
          printf("@ replica %d handler of ticket %d returns: ", r, et[r]);
          printOutcome(decided[r]); printf("\n")
       :: else ->
          printf("@ replica %d handler of ticket %d returns (outcome already decided)\n", r, et[r])
       fi;
       freeIfDone(r)
     }
  /* watchdog: Executions.timeOutOverdue -> Execution.timeOut. The handler ran past its timeout
     (any time shorter than the lease): records "retry: timeout" and interrupts; the handler may
     ignore the interrupt and stay inside */
  :: atomic {
       UP(r) && inside[r] && decided[r] == O_NONE ->
       decided[r] = O_RETRY;
#ifdef TIMEOUT_AT_ONCE
       early[r] = true;  /* the outcome goes to the writer while the thread is still inside */
#endif
       printf("@ replica %d watchdog: ticket %d timed out, thread still inside\n", r, et[r])
     }
#ifndef NO_RENEWAL
  /* renewal timer, while the thread is inside: UPDATE ... SET next_retry_at = now + lease
     WHERE id = ? AND version = ? AND status = 0 (no version bump); 0 rows fences the execution.
     The Clock waits for it (a healthy replica renews in time). One renewal, then the hard cap
     (maxExecutionTime) is reached: a wedged thread stops renewing and its lease may lapse. */
  :: atomic {
       RENEWING(r) && gl[r] <= 1 ->
       if
       :: cur[r] && status[et[r]] == PENDING -> due[et[r]] = LEASE; gl[r] = LEASE; capped[r] = true;
          printf("@ replica %d renews the lease of ticket %d (hard cap reached)\n", r, et[r])
       :: else -> fenced[r] = true;
          printf("@ replica %d renewal of ticket %d: 0 rows, execution fenced\n", r, et[r])
       fi
     }
#endif
  /* write-behind: WriteBehind.writeGroup -> Dialect.deleteIfCurrent / updateIfCurrent,
     WHERE id = ? AND version = ? AND status = 0. The statement may reach the database at any time
     after the outcome (the writer retries; a frozen replica resumes later) */
  :: atomic {
       UP(r) && READY(r) ->
       t = et[r];
       if
       :: fenced[r] ->        /* fenced by a renewal: dropped (counted) */
          printf("@ replica %d drops the outcome of fenced ticket %d\n", r, t)
       :: !fenced[r] && CAS_OK(r) ->
          printf("@ replica %d writes back ticket %d: ", r, t);
          printOutcome(decided[r]);
          if :: inside[r] -> printf(", its handler still running\n") :: else -> printf("\n") fi;
          if :: !cur[r] -> printf("@ VIOLATED: a stale write-back changed the row\n") :: else -> skip fi;
          assert(cur[r]);     /* a stale write-back never changes a row */
          if
          :: decided[r] == O_SUCCESS -> transition(t, SUCCEEDED); succeededOnce[t] = true
          :: decided[r] == O_RETRY && attempts[t] >= MAXA -> transition(t, DEAD)  /* exhausted */
          :: decided[r] == O_RETRY && attempts[t] < MAXA -> transition(t, PENDING); due[t] = BACKOFF
          :: decided[r] == O_RELEASE ->
             transition(t, PENDING); due[t] = 0;
             if :: attempts[t] > 0 -> attempts[t]-- :: else -> skip fi
          fi
       :: !fenced[r] && !CAS_OK(r) ->       /* 0 rows: taken over or cancelled, dropped */
          printf("@ replica %d write-back of ticket %d: 0 rows, dropped\n", r, t)
       fi;
       decided[r] = O_DONE; t = 0;
       freeIfDone(r)
     }
  /* write-behind: retries until the lease end minus the margin, then drops the outcome (the
     database was down); the ticket runs again after its lease */
  :: atomic {
       UP(r) && READY(r) ->
       printf("@ replica %d writer gives up on ticket %d\n", r, et[r]);
       decided[r] = O_DONE; freeIfDone(r)
     }
  od
}

/* ==== The logical clock: database now() advances by one tick ==== */
active proctype Clock() {
  byte i;
  do
  :: atomic {
       /* a healthy replica renews before its lease lapses */
       !(RENEWING(0) && gl[0] == 1) && !(RENEWING(1) && gl[1] == 1) ->
       for (i : 0 .. NT - 1) {
         if :: due[i] > 0 -> due[i]-- :: else -> skip fi
       }
       for (i : 0 .. NR - 1) {
         if :: gl[i] > 0 -> gl[i]-- :: else -> skip fi
       }
       printf("@ tick\n");
       i = 0
     }
  od
}

/* ==== Operator: Admin -> OperatorActions.cancel, requeueDead, setPaused ==== */
active proctype Operator() {
  byte t;
  do
  /* TicketStore.cancel: PENDING or DEAD -> CANCELED; refused while the ticket has a live lease */
  :: atomic {
       if
       :: cancels > 0 && CANCELABLE(0) -> t = 0
       :: cancels > 0 && CANCELABLE(1) -> t = 1
#if NT > 2
       :: cancels > 0 && CANCELABLE(2) -> t = 2
#endif
       fi;
       cancels--; transition(t, CANCELED); canceledOnce[t] = true;
       printf("@ operator cancels ticket %d\n", t);
       t = 0
     }
  /* TicketStore.requeueDead: DEAD -> PENDING, attempts = 0, due now */
  :: atomic {
       if
       :: requeues > 0 && status[0] == DEAD -> t = 0
       :: requeues > 0 && status[1] == DEAD -> t = 1
#if NT > 2
       :: requeues > 0 && status[2] == DEAD -> t = 2
#endif
       fi;
       requeues--; transition(t, PENDING); attempts[t] = 0; due[t] = 0;
       printf("@ operator requeues ticket %d\n", t);
       t = 0
     }
  /* TicketStore.setPaused: claims skip the type; in-flight executions go on */
  :: atomic { pauses > 0 && !paused -> pauses--; paused = true; printf("@ operator pauses\n") }
  :: atomic { paused -> paused = false; printf("@ operator resumes\n") }
  od
}

/* ==== Faults and lifecycle: SIGSTOP/SIGCONT, kill -9, Dispatcher.close ==== */
active proctype Environment() {
  byte r;
  do
  :: atomic {
       /* replica 0 only: the replicas are symmetric */
       freezes > 0 && !crashed[0] -> freezes--; frozen[0] = true; printf("@ replica 0 frozen\n")
     }
  :: atomic { frozen[0] -> frozen[0] = false; printf("@ replica 0 resumes\n") }
  /* kill -9: the process and its handler thread are gone; nothing written, nothing released */
  :: atomic {
       if :: exits > 0 -> r = 0 :: exits > 0 -> r = 1 fi;
       exits--; crashed[r] = true; frozen[r] = false;
       inside[r] = false; et[r] = NONE; cur[r] = false; decided[r] = O_NONE; early[r] = false;
       fenced[r] = false; capped[r] = false; gl[r] = 0;
       printf("@ replica %d killed\n", r);
       r = 0
     }
  /* Dispatcher.close: stop claiming (and renewing), wait for in-flight handlers */
  :: atomic {
       if :: exits > 0 && UP(0) -> r = 0 :: exits > 0 && UP(1) -> r = 1 fi;
       exits--; closed[r] = true;
       printf("@ replica %d close(): stops claiming and renewing\n", r);
       r = 0
     }
  /* Dispatcher.close after shutdownTimeout: a thread still inside is abandoned. Fixed: its
     attempt is given back (CAS on its version), the lease end stays; no renewal after close. */
  :: atomic {
       if
       :: UP(0) && closed[0] && !waited[0] -> r = 0
       :: UP(1) && closed[1] && !waited[1] -> r = 1
       fi;
       waited[r] = true;
       if
       :: inside[r] && decided[r] == O_NONE ->
          decided[r] = O_ABANDONED;
          if
          :: cur[r] && status[et[r]] == PENDING ->
#ifndef SHUTDOWN_KEEPS_ATTEMPT
             if :: attempts[et[r]] > 0 -> attempts[et[r]]-- :: else -> skip fi;
#endif
#ifdef SHUTDOWN_RELEASES_RUNNING
             transition(et[r], PENDING); due[et[r]] = 0;  /* next_retry_at = now */
             printf("@ replica %d close() timed out: releases ticket %d, handler still running\n",
               r, et[r])
#else
             bumpVersion(et[r]);  /* keeps its lease end and owner */
             printf("@ replica %d close() timed out: gives back the attempt of ticket %d, lease kept\n",
               r, et[r])
#endif
          :: else -> skip
          fi
       :: else -> skip
       fi;
       r = 0
     }
  od
}

/* ==== Safety invariants, checked in every reachable state ==== */
/* two executions of one ticket inside the handler, both with a live lease */
#define OVERLAP (inside[0] && inside[1] && et[0] == et[1] && gl[0] > 0 && gl[1] > 0)
#define RUNS_LIVE(r, t) (inside[r] && et[r] == t && gl[r] > 0)
/* ticket 1 inside its handler while its predecessor is not terminal or still running live */
#define ORDER_BROKEN ((inside[0] && et[0] == 1 || inside[1] && et[1] == 1) \
  && (status[0] == PENDING || status[0] == DEAD || RUNS_LIVE(0, 0) || RUNS_LIVE(1, 0)))
#if NT > 2
#define OVER_MAX (attempts[0] > MAXA || attempts[1] > MAXA || attempts[2] > MAXA)
#else
#define OVER_MAX (attempts[0] > MAXA || attempts[1] > MAXA)
#endif

active proctype Monitor() {
  atomic {
    (OVERLAP || ORDER_BROKEN || OVER_MAX) ->
    if
    :: OVERLAP -> printf("@ VIOLATED: two executions of one ticket inside the handler, both leases live\n")
    :: ORDER_BROKEN -> printf("@ VIOLATED: ticket 1 runs before its predecessor is done\n")
    :: OVER_MAX -> printf("@ VIOLATED: attempts above max_attempts\n")
    fi;
    assert(!OVERLAP);
    assert(!ORDER_BROKEN);
    assert(!OVER_MAX)
  }
}

init {
  byte i;
  atomic {
    for (i : 0 .. NR - 1) { et[i] = NONE }
    i = 0;
    run Replica(0); run Replica(1)
  }
}

/* ==== Liveness: every committed ticket ends terminal (SUCCEEDED, DEAD or CANCELED), except a
   ticket that waits behind a DEAD head of its ordered aggregate: that one waits for an operator
   (invariant 7). Checked under weak fairness; faults and operator actions are bounded. ==== */
#define SETTLED1 (TERMINAL(1) || status[0] == DEAD)
#if NT > 2
ltl terminates { <> [] (TERMINAL(0) && SETTLED1 && TERMINAL(2)) }
#else
ltl terminates { <> [] (TERMINAL(0) && SETTLED1) }
#endif
