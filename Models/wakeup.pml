/*
 * The loop's wake-up protocol, as a Promela model checked exhaustively by spin.
 *
 * What it decides: whether a producer writes the wake-up eventfd, and whether the loop sleeps.
 * Property: a job (or a signalled source) that was enqueued is run without a further enqueue.
 * The model ends every interleaving with a watchdog: when nothing in the system can move (the
 * producers are done and the loop blocks in its wait), no work may be left queued.
 *
 * Modelled, as in Sources/RunLoopCore (Loop+Run.swift, Loop+Wait.swift, WakeUpState.swift):
 *  - the loop's lock; every field read or written under it is sequentially consistent here;
 *  - the flags read or written outside the lock, through x86-TSO store buffers: a store goes
 *    into the storing thread's buffer and reaches memory later (any time, FIFO); a load sees
 *    its own buffer first; taking or releasing the lock, and any system call, drains the buffer;
 *  - the per-run "ignore wake-ups" flag (CF's W3 window: from a wake to the top of the next pass)
 *    and ours from a pass's first source0 perform, after which its wait only polls: one flag
 *    here, as producers treat the two alike; the second is set with a plain store outside the
 *    lock (through the store buffer) and cleared under it with the first;
 *  - the job queue and its lock-free "has blocks" mirror, read at the top of the pass;
 *  - the wake-up eventfd: edge-triggered in the mode's epoll set and never read, so a write
 *    puts ONE event on the set's ready list (two writes before a wait coalesce into one);
 *  - a wake-up on the loop's own thread, noted instead of written;
 *  - a batch wait (several fd sources in the mode) that takes every ready event at once;
 *  - producers on other threads (executor jobs; perform + wakeUp is the same two steps).
 *
 * Build-time switches reproduce the two defects found in issue 26, and a third that the rule
 * for performed sources must not have (all must fail):
 *   -DBUG_IGNORE_OUTSIDE_LOCK   the top of the pass clears "ignore wake-ups" with a plain store
 *                               outside the lock, then reads the "has blocks" mirror
 *   -DBUG_BATCH_KEEPS_PENDING   a batch wait takes the wake-up's event with the fd events but
 *                               leaves "wake-up pending" set
 *   -DBUG_PERFORMED_PASS_SLEEPS a pass that performed a source ignores wake-ups from then on,
 *                               but its wait may block as if nothing had been handled
 * Without switches the model is the fixed protocol and must pass. Models/check runs all four.
 */

#ifndef PRODUCERS
#define PRODUCERS 2      /* threads that enqueue jobs */
#endif
#ifndef JOBS
#define JOBS 2           /* jobs per producer */
#endif
#ifndef OWN_WAKEUPS
#define OWN_WAKEUPS 1    /* own-thread "signal a source + wakeUp()" done from a callout */
#endif
#ifndef FD_EVENTS
#define FD_EVENTS 1      /* times the fd sources of the mode become ready together */
#endif

#define EMPTY 2          /* an empty store-buffer slot */

bit  lk;                 /* the loop's lock */
/* Under the lock */
byte blocks;             /* queued jobs */
bit  pending;            /* a wake-up is pending (written or noted) */
bit  noted;              /* ... noted on the loop's own thread, nothing written */
bit  ignore = 0;         /* W3: the innermost run ignores wake-ups now */
/* Outside the lock */
bit  hasBlocks;          /* mirror of blocks > 0, read by the loop without the lock */
bit  event;              /* the wake eventfd's event on the mode's ready list (edge-triggered) */
bit  signalled;          /* a source0 signalled (loop thread only) */
bit  fdReady;            /* the mode's fd sources are readable (level-triggered) */
byte ran;                /* jobs run */

/* Store buffers: the loop's store of `ignore`, each producer's store of `hasBlocks`. */
byte sbIgnore = EMPTY;
byte sbHas[PRODUCERS];

inline drainLoop() {
    if
    :: sbIgnore != EMPTY -> ignore = sbIgnore; sbIgnore = EMPTY
    :: else -> skip
    fi
}
inline drainProducer(p) {
    if
    :: sbHas[p] != EMPTY -> hasBlocks = sbHas[p]; sbHas[p] = EMPTY
    :: else -> skip
    fi
}
inline lockLoop()      { atomic { lk == 0 -> drainLoop(); lk = 1 } }
inline unlockLoop()    { atomic { drainLoop(); lk = 0 } }
inline lockProducer(p)   { atomic { lk == 0 -> drainProducer(p); lk = 1 } }
inline unlockProducer(p) { atomic { drainProducer(p); lk = 0 } }

/* Any buffered store may reach memory at any moment: the loop's, and each producer's. */
active proctype LoopStoreBuffer() {
end:
    do
    :: atomic { sbIgnore != EMPTY -> ignore = sbIgnore; sbIgnore = EMPTY }
    od
}
proctype ProducerStoreBuffer(byte p) {
end:
    do
    :: atomic { sbHas[p] != EMPTY -> hasBlocks = sbHas[p]; sbHas[p] = EMPTY }
    od
}

/* enqueueJob: queue the job and decide the wake-up in one critical section, write after it. */
proctype Producer(byte me) {
    byte n = 0;
    bit write;
    do
    :: n < JOBS ->
        write = 0;
        lockProducer(me);
        blocks++;
        sbHas[me] = 1;                      /* hasBlocks.store(true): buffered */
        /* decideWakeUpLocked, another thread: reads `ignore` from memory */
        if
        :: ignore -> skip                   /* W3: the loop will look before it sleeps */
        :: !ignore && noted -> skip         /* the loop's next wait takes the note */
        :: !ignore && !noted -> pending = 1; write = 1
        fi;
        unlockProducer(me);
        if
        :: write -> atomic { drainProducer(me); event = 1 }   /* write(eventfd): one event */
        :: else -> skip
        fi;
        n++
    :: n == JOBS -> break
    od
}

/* The fd sources' peer: they become readable now and then. */
active proctype Peer() {
    byte n = 0;
    do
    :: n < FD_EVENTS -> fdReady = 1; n++
    :: n == FD_EVENTS -> break
    od
}

/* runPasses, one run that never ends (no stop, no timeout). */
active proctype Loop() {
    bit hb;
    byte own = 0;
    bit tookWake;
    bit handled;                             /* this pass performed a source: its wait polls */
    do
    :: true ->
        /* ---- top of the pass ---- */
#ifdef BUG_IGNORE_OUTSIDE_LOCK
        sbIgnore = 0;                       /* ignoreWakeUps = false, a plain store, no lock */
#endif
        /* B3: doBlocks reads the mirror without the lock */
        hb = hasBlocks;
        if
        :: hb ->
            lockLoop(); ran = ran + blocks; blocks = 0; hasBlocks = 0; unlockLoop()
        :: else -> skip
        fi;
        /* S2: a signalled source is performed (its callout may queue more). From the first
           perform on, wake-ups are ignored: this pass's wait polls, the next pass looks again.
           The flag is set without the lock: a plain store, buffered behind any earlier one. */
        handled = 0;
        if
        :: signalled -> atomic { drainLoop(); sbIgnore = 1 }; signalled = 0; handled = 1
        :: else -> skip
        fi;
        /* a callout of this pass (a source, a BW observer) signals a source and wakes the loop */
        if
        :: own < OWN_WAKEUPS ->
            own++;
            signalled = 1;
            lockLoop();
            /* decideWakeUpLocked on the loop's own thread: note it, write nothing */
            if
            :: (sbIgnore != EMPTY -> sbIgnore : ignore) -> skip
            :: else ->
                if
                :: noted -> skip
                :: !noted && !pending -> pending = 1; noted = 1
                :: !noted && pending -> skip     /* a written one is pending: its event wakes us */
                fi
            fi;
            unlockLoop()
        :: true -> skip
        fi;
        /* ---- the wait ---- */
        tookWake = 0;
        lockLoop();
        if
        :: noted ->                          /* a noted wake-up: the wait returns at once */
            noted = 0; pending = 0; tookWake = 1
        :: else -> skip
        fi;
        unlockLoop();
#ifdef BUG_PERFORMED_PASS_SLEEPS
        handled = 0;
#endif
        if
        :: tookWake -> skip
        :: !tookWake && handled ->
            /* epoll_wait(0): takes what is ready, never sleeps */
            atomic {
                if
                :: event -> event = 0; tookWake = 1
                :: else -> skip
                fi;
                fdReady = 0
            }
        :: !tookWake && !handled ->
            /* epoll_wait(-1): sleeps until an event; end state only if nothing is queued */
end_wait:
            if
            :: atomic { event && !fdReady -> event = 0; tookWake = 1 }
            :: atomic { fdReady && !event -> fdReady = 0 }
            :: atomic { event && fdReady ->      /* capacity 1: one of them; the other stays */
                   event = 0; tookWake = 1 }
            :: atomic { event && fdReady ->
                   fdReady = 0 }
            :: atomic { event && fdReady ->      /* a batch wait: every ready event at once */
                   event = 0; fdReady = 0;
#ifndef BUG_BATCH_KEEPS_PENDING
                   tookWake = 1
#endif
               }
            fi
        fi;
        /* after the wait: the lock, the wake-up taken, W3's window opens */
        lockLoop();
        if
        :: tookWake -> pending = 0
        :: else -> skip
        fi;
        ignore = 1;
        /* end of the pass: blocks queued meanwhile run now */
        if
        :: blocks > 0 -> ran = ran + blocks; blocks = 0; hasBlocks = 0
        :: else -> skip
        fi;
        /* exit checks (none end this run) */
#ifndef BUG_IGNORE_OUTSIDE_LOCK
        ignore = 0;                          /* W3's window closes in the critical section */
#endif
        unlockLoop()
    od
}

init {
    byte p = 0;
    atomic {
        do
        :: p < PRODUCERS -> sbHas[p] = EMPTY; run ProducerStoreBuffer(p); run Producer(p); p++
        :: p == PRODUCERS -> break
        od
    }
}

/* When nothing can move any more (producers done, the loop asleep), nothing is left queued. */
active proctype Watchdog() {
    timeout -> assert(blocks == 0 && !signalled && ran == PRODUCERS * JOBS)
}
