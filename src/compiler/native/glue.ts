// The Node-API side of the native backend. A program's module is a shared object of its
// kernels and a table of them (glueTableSource), exported as `xk_program`; the glue
// (glueModuleSource), the same for every program, is one Node-API module that a process
// loads once (toolchain.ts builds it once per machine) and that loads each program's
// module: `load(path)` returns the program's entry points, which check a call's buffers
// lie inside device memory and run the kernel, on the calling thread or split across
// the process's pool of threads:
//
//   run(k, memory: Uint8Array, pointers: Uint32Array, begin, end, threads, scratch: Uint32Array)
//
//   runCalls(memory: Uint8Array, calls: Uint32Array, threads, scratch: Uint32Array, times: Float64Array | null)
//
// runs a list of calls (encodeCalls) in one crossing: the executor's runs of consecutive
// C kernel steps and row groups, whose calls between kernels would otherwise cost it
// more than most small kernels do (a crossing's code and data are cold after a kernel
// that streamed megabytes). Each call is checked and split as run's are; `times`, when
// given, accumulates each call's wall nanoseconds at its time slot (a profiler's): read
// from the monotonic clock alone, which the C library reads without a system call (the
// vDSO), so that a timed run costs what an untimed one does. A CPU-time clock is a
// system call each read (about 1.3 us, and a point where a loaded machine preempts the
// thread): read per kernel, timed runs of GPT-2's decode step took 50-250 us longer than
// untimed ones (2026-12-01). The CPU time of a whole call list is its caller's to read.
// `memory` views the whole device memory (its base pointer is read on every call:
// memory.grow may move it); `pointers` holds the kernel's operand and result offsets;
// `scratch` the offset of each thread's scratch region (used when the kernel takes
// scratch: thread p's is passed as the kernel's last argument). Every byte range the
// kernel may touch, from its declared access (whole buffers, or rows [begin, end) of
// row-wise buffers, where offsets wrap at 2^32 as in wasm32), is checked against the
// memory's length before the kernel runs, so a bad offset is a thrown RangeError, never
// a stray write. A program's entry points also hold `adviseHugePages(memory: Uint8Array)`,
// which advises the device memory to transparent huge pages (build.ts adviseHugePages).
//
// The process's services: the fault guard and the thread pool are the glue's, and the
// glue is one library per process (Node loads a path once; its worker threads load the
// same library again and share its statics): a process has one signal handler and one
// pool of at most MAX_THREADS - 1 threads however many programs it loads (a pool per
// program's module left hundreds of idle threads behind). installGuard, which the
// toolchain calls once the glue is loaded, installs the handler. The pool
// starts its threads on first use; the calling thread does the first part; its threads
// spin briefly after their part before they sleep, so that the next kernel of a program
// finds them awake, and longer while a call list with a split call ahead holds the pool
// (runCalls; xk_pool_hold). A row group of runCalls is split as one call, each thread
// running its rows through every kernel. A call stays on the calling thread when it finds the pool busy with
// another caller, when its work is small, or when its kernel has measured that the
// split does not pay (MIN_PARALLEL_COST). Before installGuard, kernels run on the
// calling thread, unguarded.
//
// Faults: a kernel that faults anyway (SIGSEGV, SIGBUS, SIGFPE, SIGILL raised by its own
// instructions, on the calling thread or a pool thread) does not end the process: every
// kernel runs inside a guard (sigsetjmp) that the process's signal handler jumps back
// to, and `run` throws an Error with code XLATS_NATIVE_FAULT naming the kernel, the
// signal, the address and the thread (build.ts turns it into a NativeFaultError and
// poisons the executable). The handler's table of guarded threads is keyed by
// pthread_self, so the handler reads no thread-local storage, which a dlopen'ed module
// may only allocate lazily. A signal on a thread that is not inside a kernel, or not
// raised by a fault (kill, raise), goes on to the handler installed before: V8 handles
// WebAssembly's out-of-bounds accesses with its own SIGSEGV handler, which must keep
// seeing them.

import type { CallGroup } from "../backend_contract.js";
import type { SplitBalance } from "../kernel/gemm_plan.js";
import { appendAll } from "../../types/arrays.js";

/** What the glue knows of one kernel, to check its calls and split its work. */
export interface GlueKernel {
  readonly symbol: string;
  /** Operand and result buffers, in argument order: their bytes, and their bytes a row (0: the kernel may touch all of it). */
  readonly buffers: readonly { readonly bytes: number; readonly rowBytes: number }[];
  readonly scratchBytes: number;
  readonly parallelExtent: number;
  readonly costPerUnit: number;
  /** How a split call's threads balance it (NativeKernel's balance); grain 0: a static share each. */
  readonly balance: SplitBalance;
}

/**
 * How a call is split. Cost units (units × costPerUnit) run at roughly 100 to 250 a
 * nanosecond on one core of the machines measured (an add of two 98,304-element f32
 * arrays: 1.5 million units in 10.7 us; a 1024 matmul: 2.1 billion in 9 ms). Work below
 * MIN_PARALLEL_COST (about 2 us) stays on the calling thread: handing a part to another
 * core and joining it costs about a microsecond with the pool's threads spinning, more
 * when its data sits in the caller's cache. Work from ALWAYS_PARALLEL_COST (about half
 * a millisecond) is always split. Between the two, each kernel of a module measures
 * itself (a row group of runCalls: its first kernel, for the group): its first
 * 2 × SPLIT_TRIALS calls alternate between the calling thread alone and the split, and
 * later calls take the faster of the two best times per unit (so that two threads are
 * never slower than one where the split does not pay, whatever the cost units say:
 * on two cores, a step reading rows that a split product wrote half on each core reads
 * half of them from the other core's cache, at about half the rate, 2026-12-01); every
 * SPLIT_RETRY_CALLS calls it measures again, as the machine's load changes. A split
 * trial in which no other thread ran any of the work (its threads had no core in time:
 * the calling thread then claims every range itself) measured no split and does not
 * count; until SPLIT_TRIALS split trials have counted, every SPLIT_UNSEEN_RETRY-th call
 * tries the split again. (Counted, such trials timed the split as the calling thread
 * alone plus the hand-off, and the kernel stayed alone for the next 4096 calls: at load
 * 15, GPT-2's decode at two threads ran its products of 768 x 3072 weights on one thread
 * for good after its first eight calls, 2026-12-01. Until session 49 the retries stopped
 * at the first split trial that counted, whose one time then stood against the best of
 * four alone: the decode's first qkv and fc products stayed alone in a sitting where the
 * pool's thread missed the first trials, 2026-12-01, XLATS_POOL_TRACE's trial lines. A
 * split the other threads miss costs about the hand-off; one not tried where they would
 * come costs half the call.)
 */
export const MIN_PARALLEL_COST = 1 << 18;
export const ALWAYS_PARALLEL_COST = 1 << 26;
/**
 * The cost from which a kernel whose balance says alwaysSplits (the streaming kernel over
 * B in panels: gemm_plan.ts's gemmBalance) splits every call, without trials. The trials
 * compare four calls each way, run by run, and at load a run's conditions (the other
 * core busy, B's part left in the L3) decide them: GPT-2's decode at two threads, traced
 * at load 12-15 (2026-12-02), split one layer's fc2 and kept the other's alone, and its
 * two qkv products read 18.5 against 19.7 and 27.4 against 18.6 us per 1024 units. Every
 * such call split, the step's best runs at two threads were 8-15% faster and its medians 3-14%
 * (docs/benchmarks.md, session 50). 2^20: 768 x 768 weights, the decode's least.
 */
export const STREAMED_PARALLEL_COST = 1 << 20;
export const SPLIT_TRIALS = 4;
export const SPLIT_RETRY_CALLS = 4096;
export const SPLIT_UNSEEN_RETRY = 16;

/**
 * The call list runCalls reads: [0] (written on an error: the module's kernel whose call
 * failed), [1] the groups; per group rows, block, members; per member its kernel, time
 * slot, flags (1: block row bytes follow its pointers), its pointers, [its block row
 * bytes]. `pointerAt[g][m]`: where member m of group g has its pointers, for the caller
 * to write the offsets that change from run to run.
 */
export function encodeCalls(groups: readonly CallGroup[]): { calls: Uint32Array; pointerAt: number[][] } {
  const words = [0, groups.length];
  const pointerAt = groups.map((g) => {
    words.push(g.rows, g.block, g.members.length);
    return g.members.map((m) => {
      words.push(m.kernel, m.timeSlot, m.blockRowBytes === undefined ? 0 : 1);
      const at = words.length;
      appendAll(words, m.pointers);
      if (m.blockRowBytes !== undefined) appendAll(words, m.blockRowBytes);
      return at;
    });
  });
  return { calls: Uint32Array.from(words), pointerAt };
}

/** Most threads a call may use (the pool's size limit). */
export const MAX_THREADS = 256;

const GUARD = String.raw`
/* The process's services: the guard and the pool (see the header of glue.ts). */
#define XK_GUARD_SLOTS 1024
#define XK_MAX_THREADS ${MAX_THREADS}
/* One part of a call: part p of parts, on the context its caller passed. */
typedef void (*xk_part_fn)(void *ctx, int p, int parts);
typedef struct {
  /* Claims a slot for the calling thread, its jump buffer jb (-1: every slot is taken). */
  int (*enter)(sigjmp_buf *jb);
  /* Frees the slot: the signal that stopped the kernel (0: none), its address in *addr. */
  int (*leave)(int slot, void **addr);
  /* Runs part(ctx, p, n) for p < n, this thread doing p = 0, and returns n once every
     part that started has ended: n = parts, or 1 when the pool is busy or cannot start its
     threads. A part whose thread comes after the caller's part has ended does not run:
     parts claim their work from ctx as they go, so the caller's part does what no other
     took (a thread the system left waiting for a core delays nothing). */
  int (*parallel)(xk_part_fn part, void *ctx, int parts);
  /* Holds the pool awake (on = 1) until the matching hold(0): a split call is coming. */
  void (*hold)(int on);
} xk_guard_api;

typedef struct {
  _Atomic uintptr_t owner;
  sigjmp_buf *volatile jb;
  volatile sig_atomic_t sig;
  void *volatile addr;
} xk_slot;

static xk_slot xk_slots[XK_GUARD_SLOTS];
static const int xk_signals[4] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
static struct sigaction xk_previous[4];

static int xk_guard_enter(sigjmp_buf *jb) {
  uintptr_t me = (uintptr_t)pthread_self();
  for (int i = 0; i < XK_GUARD_SLOTS; i++) {
    uintptr_t none = 0;
    if (atomic_load_explicit(&xk_slots[i].owner, memory_order_relaxed) != 0) continue;
    xk_slots[i].sig = 0;
    xk_slots[i].addr = NULL;
    xk_slots[i].jb = jb;
    if (atomic_compare_exchange_strong(&xk_slots[i].owner, &none, me)) return i;
  }
  return -1;
}

static int xk_guard_leave(int slot, void **addr) {
  int sig = xk_slots[slot].sig;
  *addr = xk_slots[slot].addr;
  xk_slots[slot].jb = NULL;
  atomic_store(&xk_slots[slot].owner, 0);
  return sig;
}

/* The handler installed before ours, as the kernel would have run it. */
static void xk_chain(int sig, siginfo_t *info, void *context) {
  int i = 0;
  while (i < 3 && xk_signals[i] != sig) i++;
  const struct sigaction *p = &xk_previous[i];
  if (p->sa_flags & SA_SIGINFO) {
    if (p->sa_sigaction != NULL) { p->sa_sigaction(sig, info, context); return; }
  } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
    p->sa_handler(sig);
    return;
  }
  /* The default action: restored, then the signal raised again (it is delivered when this
     handler returns; a fault's instruction also faults again). */
  sigaction(sig, p, NULL);
  raise(sig);
}

static void xk_on_signal(int sig, siginfo_t *info, void *context) {
  if (info != NULL && info->si_code > 0) {
    uintptr_t me = (uintptr_t)pthread_self();
    for (int i = 0; i < XK_GUARD_SLOTS; i++) {
      xk_slot *s = &xk_slots[i];
      if (atomic_load_explicit(&s->owner, memory_order_acquire) != me || s->jb == NULL) continue;
      sigjmp_buf *jb = s->jb;
      s->jb = NULL;
      s->sig = sig;
      s->addr = info->si_addr;
      siglongjmp(*jb, 1);
    }
  }
  xk_chain(sig, info, context);
}

`;

/* The monotonic clock, which the C library reads without a system call (the vDSO): the
   pool's spins, the split trials, the traces and a profile's per-kernel times read it. */
const POOL_CLOCK = String.raw`
#include <time.h>
static inline int64_t xk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
`;

const POOL = String.raw`
/* The pool (one per process, as the glue module is; see the header of glue.ts). A call is
   published as one word, (generation << 16) | parts, so that a worker reads which call
   it is and whether it takes part in one load; the call's function and context are
   written before that word and read only by the workers taking part, which the caller
   waits for before it publishes the next call. Once its own part has ended, the caller
   closes the call (the word's parts set to 0) and waits only for the parts that had
   started: a worker counts itself active, then runs its part only if the call it read is
   still open. A worker spins on the word for
   XK_SPIN_NS after its last part before it sleeps on the condition (a thread woken
   from sleep takes tens of microseconds here; one spinning, well under one); the caller
   spins on the active parts, then sleeps. Both spins yield the core every
   XK_SPIN_CHECK rounds (sched_yield: on a core of its own it returns at once): where
   the system has put the caller and a worker on one core (a loaded machine; traced with
   XLATS_POOL_TRACE, 2026-12-01: every part of the MLP's products on one core at load
   6), a thread spinning for the other would otherwise keep the core from it until the
   scheduler's next tick, a millisecond or more. */
#define XK_SPIN_NS 100000
/* The spin while a caller holds the pool awake (xk_pool_hold): its list of calls has a
   split call ahead, after unsplit steps that may outlast XK_SPIN_NS (the residual add and
   layer norm before GPT-2's qkv and fc products: the worker slept and started those
   products 60 us late, 2026-12-01). Bounded, so that a long run of unsplit steps burns at
   most this much of the other core. */
#define XK_HOLD_SPIN_NS 1000000
#define XK_WAIT_SPIN_NS 2000000
#define XK_SPIN_CHECK 256
#if defined(__x86_64__) || defined(__i386__)
/* The pause instruction as inline assembly: <immintrin.h> doubles every module's compile time. */
#define xk_relax() __asm__ __volatile__("pause")
#elif defined(__aarch64__)
#define xk_relax() __asm__ __volatile__("yield")
#else
#define xk_relax() ((void)0)
#endif
typedef struct {
  pthread_mutex_t mu; pthread_cond_t go; pthread_cond_t done;
  int started;                 /* threads started (under mu) */
  _Atomic int busy;            /* a caller holds the pool */
  _Atomic uint64_t call;       /* (generation << 16) | parts */
  _Atomic int active;          /* workers inside the current call's part */
  _Atomic int sleepers;        /* workers asleep on go */
  _Atomic int caller_asleep;   /* the caller asleep on done */
  _Atomic int holds;           /* callers holding the pool awake (xk_pool_hold) */
  _Atomic uint32_t nudges;     /* wake-ups without a call (under mu), from xk_pool_hold */
  xk_part_fn part; void *ctx;
} xk_pool_t;
static xk_pool_t xk_pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

/* A caller about to make split calls holds the pool awake (on = 1) until its last one
   has ended (on = 0): the workers then spin up to XK_HOLD_SPIN_NS between calls, and
   sleeping ones are woken now, so that their wake-up overlaps the caller's unsplit
   steps instead of delaying its first split call. */
static void xk_pool_hold(int on) {
  if (!on) { atomic_fetch_sub(&xk_pool.holds, 1); return; }
  atomic_fetch_add(&xk_pool.holds, 1);
  if (atomic_load(&xk_pool.sleepers) > 0) {
    pthread_mutex_lock(&xk_pool.mu);
    atomic_fetch_add(&xk_pool.nudges, 1);
    pthread_cond_broadcast(&xk_pool.go);
    pthread_mutex_unlock(&xk_pool.mu);
  }
}

static void *xk_worker(void *arg) {
  int index = (int)(intptr_t)arg;
  /* No call yet seen: the call current when the thread starts is either the one it was
     started for or an earlier one it takes no part in (its index was past every earlier
     call's parts). */
  uint64_t seen = ~(uint64_t)0;
  /* An alternate stack for the handler, so that a kernel that overflows its stack is caught too. */
  stack_t alt;
  alt.ss_size = 1 << 16;
  alt.ss_flags = 0;
  alt.ss_sp = malloc(alt.ss_size);
  if (alt.ss_sp != NULL) sigaltstack(&alt, NULL);
  for (;;) {
    uint64_t word = atomic_load_explicit(&xk_pool.call, memory_order_acquire);
    if ((word >> 16) == seen) {
      int64_t since = xk_now_ns();
      for (int i = 1; (word >> 16) == seen; i++) {
        xk_relax();
        if (i % XK_SPIN_CHECK == 0) {
          if (xk_now_ns() - since > (atomic_load_explicit(&xk_pool.holds, memory_order_relaxed) > 0 ? XK_HOLD_SPIN_NS : XK_SPIN_NS)) break;
          sched_yield();
        }
        word = atomic_load_explicit(&xk_pool.call, memory_order_acquire);
      }
      if ((word >> 16) == seen) {
        /* Asleep: the caller, having published the call, wakes the sleepers it counts; a
           hold (xk_pool_hold) wakes them to spin again. */
        pthread_mutex_lock(&xk_pool.mu);
        atomic_fetch_add(&xk_pool.sleepers, 1);
        uint32_t nudged = atomic_load(&xk_pool.nudges);
        while (((word = atomic_load(&xk_pool.call)) >> 16) == seen && atomic_load(&xk_pool.nudges) == nudged) pthread_cond_wait(&xk_pool.go, &xk_pool.mu);
        atomic_fetch_sub(&xk_pool.sleepers, 1);
        pthread_mutex_unlock(&xk_pool.mu);
        /* Woken by a hold, not a call: spin again (never a second part of a call already seen). */
        if ((word >> 16) == seen) continue;
      }
    }
    seen = word >> 16;
    int parts = (int)(word & 0xffff);
    if (index >= parts) continue;
    XK_SEAM_HOLD_HELPER(&xk_pool.call, word);
    atomic_fetch_add(&xk_pool.active, 1);
    /* Still open (the caller has not closed it, nor published another): the caller now waits for this part. */
    if (atomic_load(&xk_pool.call) == word) xk_pool.part(xk_pool.ctx, index, parts);
    XK_SEAM_HELPER_DONE(word);
    if (atomic_fetch_sub(&xk_pool.active, 1) == 1 && atomic_load(&xk_pool.caller_asleep)) {
      pthread_mutex_lock(&xk_pool.mu);
      pthread_cond_signal(&xk_pool.done);
      pthread_mutex_unlock(&xk_pool.mu);
    }
  }
  return 0;
}

static int xk_parallel(xk_part_fn part, void *ctx, int parts) {
  if (parts > XK_MAX_THREADS) parts = XK_MAX_THREADS;
  int expected = 0;
  if (parts > 1 && !atomic_compare_exchange_strong(&xk_pool.busy, &expected, 1)) parts = 1;
  if (parts > 1) {
    if (xk_pool.started < parts - 1) {
      pthread_mutex_lock(&xk_pool.mu);
      while (xk_pool.started < parts - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&t, &attr, xk_worker, (void *)(intptr_t)(xk_pool.started + 1));
        pthread_attr_destroy(&attr);
        if (failed) { parts = xk_pool.started + 1; break; }
        xk_pool.started++;
      }
      pthread_mutex_unlock(&xk_pool.mu);
    }
    if (parts > 1) {
      xk_pool.part = part; xk_pool.ctx = ctx;
      uint64_t generation = (atomic_load(&xk_pool.call) >> 16) + 1;
      atomic_store(&xk_pool.call, (generation << 16) | (uint64_t)parts);
      if (atomic_load(&xk_pool.sleepers) > 0) {
        pthread_mutex_lock(&xk_pool.mu);
        pthread_cond_broadcast(&xk_pool.go);
        pthread_mutex_unlock(&xk_pool.mu);
      }
      XK_SEAM_AWAIT_HELPER(generation);
    } else {
      atomic_store(&xk_pool.busy, 0);
    }
  }
  if (parts < 1) parts = 1;
  part(ctx, 0, parts);
  if (parts > 1) {
    atomic_store(&xk_pool.call, atomic_load(&xk_pool.call) & ~(uint64_t)0xffff);
    int64_t until = xk_now_ns() + XK_WAIT_SPIN_NS;
    for (int i = 1; atomic_load_explicit(&xk_pool.active, memory_order_acquire) > 0; i++) {
      xk_relax();
      if (i % XK_SPIN_CHECK != 0) continue;
      if (xk_now_ns() <= until) { sched_yield(); continue; }
      pthread_mutex_lock(&xk_pool.mu);
      atomic_store(&xk_pool.caller_asleep, 1);
      while (atomic_load(&xk_pool.active) > 0) pthread_cond_wait(&xk_pool.done, &xk_pool.mu);
      atomic_store(&xk_pool.caller_asleep, 0);
      pthread_mutex_unlock(&xk_pool.mu);
    }
    atomic_store(&xk_pool.busy, 0);
  }
  return parts;
}

static const xk_guard_api xk_guard_own = { xk_guard_enter, xk_guard_leave, xk_parallel, xk_pool_hold };
static pthread_once_t xk_guard_once = PTHREAD_ONCE_INIT;
static int xk_guard_ok;
static void xk_guard_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = xk_on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  xk_guard_ok = 1;
  for (int i = 0; i < 4; i++) if (sigaction(xk_signals[i], &sa, &xk_previous[i]) != 0) xk_guard_ok = 0;
}

/* The process's guard and pool, once installGuard has run (NULL: kernels run unguarded, on the calling thread). */
static const xk_guard_api *xk_guard;
`;

/**
 * A split call balanced as it runs (the glue's, for kernels with a balance; also
 * bench/gemm_c_probe.ts's, so that it times the split the glue makes): each of `parts`
 * threads has a share of the units [begin, end), at first its static split's. A thread
 * takes pieces of its own share from the front a grain at a time (grains counted from
 * unit 0: a packed GEMM's chunk of columns, whose B block each call reads or packs
 * once); once its share is spent, it moves half of what is left of another's, from its
 * back and in whole grains where more than one is left, into its own share, and goes on
 * taking pieces of that. Moved, stolen units can be stolen back in turn: a thief that
 * ran its whole steal as one piece left the owner, done first, idle for most of that
 * piece (the MLP's second product, 10-15 us a call, 2026-12-01). Where the kernel allows
 * grains to be cut (gemmBalance: a packed GEMM's B pre-packed and in L2), a piece is at
 * most half of what is left of the share, so that a thread done early finds units
 * behind the piece the owner is in however late the owner is (two thirds of the last
 * grain, and whole grains before it, left the MLP's faster thread idle 15-25 us a call),
 * and units are stolen half at a time whatever the grains. Needs stdatomic.h and
 * stdint.h, and XK_MAX_THREADS.
 */
export const BALANCE = String.raw`
/* Part q's share: the units [begin + front, begin + back) not yet taken, front in the low 32 bits and back in the high 32. */
typedef struct { int64_t begin, end, grain; int parts, cuts; _Atomic uint64_t share[XK_MAX_THREADS]; } xk_shares;

/* The first unit of part q's static share, as an offset from begin. */
static inline int64_t xk_share_first(const xk_shares *s, int q) { return (s->end - s->begin) * q / s->parts; }

/* Units [begin, end) (fewer than 2^31) in parts shares, pieces of grain units (cuts: pieces within a grain). */
static void xk_shares_init(xk_shares *s, int64_t begin, int64_t end, int parts, int64_t grain, int cuts) {
  s->begin = begin; s->end = end; s->parts = parts; s->grain = grain; s->cuts = cuts;
  for (int q = 0; q < parts; q++) atomic_init(&s->share[q], ((uint64_t)xk_share_first(s, q + 1) << 32) | (uint64_t)xk_share_first(s, q));
}

/* Where a piece from unit offset front of a share ending at back ends: the next grain's start
   (offsets from begin: grains counted from unit 0 where begin is a grain's start); where grains
   are cut, at most half of what is left. */
static inline int64_t xk_piece_end(const xk_shares *s, int64_t front, int64_t back) {
  int64_t cut = ((s->begin + front) / s->grain + 1) * s->grain - s->begin, left = back - front;
  if (s->cuts && cut > front + (left + 1) / 2) cut = front + (left + 1) / 2;
  return cut < back ? cut : back;
}

/* A piece of part p's own share, from its front: 0 when none is left; else 1 with the units [*b, *e). */
static int xk_take(xk_shares *s, int p, int64_t *b, int64_t *e) {
  uint64_t w = atomic_load_explicit(&s->share[p], memory_order_relaxed);
  for (;;) {
    int64_t front = (int64_t)(uint32_t)w, back = (int64_t)(w >> 32);
    if (back <= front) return 0;
    int64_t cut = xk_piece_end(s, front, back);
    /* Thieves only lower back, so a failed exchange leaves this part's front where it was. */
    if (atomic_compare_exchange_weak_explicit(&s->share[p], &w, (w & ~(uint64_t)0xffffffffu) | (uint64_t)cut, memory_order_acq_rel, memory_order_relaxed)) {
      *b = s->begin + front;
      *e = s->begin + cut;
      return 1;
    }
  }
}

/* Part p, its own share spent, moves half of what is left of part q's (from its back; from a
   grain's start where that leaves q any, else all of it, or cut anywhere) into its own, less
   the first piece, which it returns in [*b, *e) to run at once (so that every steal runs
   units: moved units are never only passed back and forth): 1 when it moved any. */
static int xk_steal(xk_shares *s, int p, int q, int64_t *b, int64_t *e) {
  int64_t g = s->grain;
  uint64_t w = atomic_load_explicit(&s->share[q], memory_order_relaxed);
  for (;;) {
    int64_t front = (int64_t)(uint32_t)w, back = (int64_t)(w >> 32), left = back - front;
    if (left <= 0) return 0;
    int64_t cut = back - (left + 1) / 2;
    if (!s->cuts) { cut = ((s->begin + cut) / g) * g - s->begin; if (cut < front) cut = front; }
    if (atomic_compare_exchange_weak_explicit(&s->share[q], &w, ((uint64_t)cut << 32) | (uint64_t)front, memory_order_acq_rel, memory_order_relaxed)) {
      int64_t piece = xk_piece_end(s, cut, back);
      /* p's share is empty and only its owner fills it: no other thread takes from it until this store. */
      atomic_store_explicit(&s->share[p], ((uint64_t)back << 32) | (uint64_t)piece, memory_order_release);
      *b = s->begin + cut;
      *e = s->begin + piece;
      return 1;
    }
  }
}

/* Part p's work: pieces of its own share, run(ctx, b, e) each (nonzero: stop), then of what
   it steals, until every share is spent (every share the call was cut into: the pool may
   have run fewer parts than it was asked for). The shares it ran units of, a bit each. */
static uint64_t xk_balanced_part(xk_shares *s, int p, int (*run)(void *ctx, int64_t b, int64_t e), void *ctx) {
  uint64_t ran = 0;
  int64_t b, e;
  while (xk_take(s, p, &b, &e)) {
    if (p < 64) ran |= UINT64_C(1) << p;
    if (run(ctx, b, e) != 0) return ran;
  }
  for (;;) {
    int from = -1;
    for (int i = 1; i < s->parts && from < 0; i++) if (xk_steal(s, p, (p + i) % s->parts, &b, &e)) from = (p + i) % s->parts;
    if (from < 0) return ran;
    if (from < 64) ran |= UINT64_C(1) << from;
    if (run(ctx, b, e) != 0) return ran;
    while (xk_take(s, p, &b, &e)) if (run(ctx, b, e) != 0) return ran;
  }
}
`;

const KERNELS = String.raw`
#define XK_MAX_ARGS 512

/* Runs k on [b, e) inside the guard: 0, or the signal that stopped it (its address in *addr). */
static int xk_call(const xk_entry *k, uint8_t *mem, const uint32_t *args, int64_t b, int64_t e, void **addr) {
  const xk_guard_api *g = xk_guard;
  sigjmp_buf jb;
  int slot = g == NULL ? -1 : g->enter(&jb);
  *addr = NULL;
  if (slot < 0) {
    k->fn(mem, args, b, e);
    return 0;
  }
  /* The mask is not saved (a system call on every call): after a fault, only the signal
     the handler was running for is blocked, and it is unblocked here. */
  if (sigsetjmp(jb, 0) == 0) k->fn(mem, args, b, e);
  int sig = g->leave(slot, addr);
  if (sig != 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  }
  return sig;
}

/* How a call ended: 0, or the first fault's signal, address and part (thread). */
typedef struct { int sig; void *addr; int part; } xk_fault;

/* XLATS_POOL_TRACE set in the environment: every call split over threads prints a line
   to stderr, the kernel, its units, its wall time, and per part (thread) when it began
   and ended (microseconds from the call's start), the thread's CPU time in it, the units
   and ranges (a bit each; of a balanced call, xk_balances, the parts' shares it took
   units from) it ran and the core it ended on (-1: unknown); a part that did
   not start before the call closed reads all zeros. A timeline, where wall time alone
   on a loaded machine says nothing (docs/benchmarks_history.md, session 43). Also a line for
   each runCalls (its groups, and the last one the pool is held awake for: -1, none) and
   for each split trial that counts (xk_record: the kernel, alone or split, its time, and
   the best times per 1024 units so far), so that a kernel left on one thread says why. */
typedef struct { int64_t start, end, cpu, units, ranges, core; } xk_part_trace;
static int xk_trace_on = -1;
static inline int64_t xk_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A part's timeline: begun (times from the call's start t0), ranges [r, last] run, ended into *out. */
static inline xk_part_trace xk_trace_begin(int64_t t0) {
  xk_part_trace t = { 0, 0, 0, 0, 0, -1 };
  if (xk_trace_on) { t.start = xk_now_ns() - t0; t.cpu = xk_thread_cpu_ns(); }
  return t;
}
static inline void xk_trace_ran(xk_part_trace *t, int r, int last, int64_t units) {
  t->units += units;
  if (last < 63) t->ranges |= ((INT64_C(2) << last) - 1) & ~((INT64_C(1) << r) - 1);
}
static inline void xk_trace_end(xk_part_trace *t, int64_t t0, xk_part_trace *out) {
  if (!xk_trace_on) return;
  t->end = xk_now_ns() - t0;
  t->cpu = xk_thread_cpu_ns() - t->cpu;
#ifdef __linux__
  t->core = sched_getcpu();
#endif
  *out = *t;
}

/* The end of an XLATS_POOL_TRACE line: each part's timeline. */
static void xk_trace_parts(const xk_part_trace *trace, int parts) {
  for (int p = 0; p < parts; p++) {
    const xk_part_trace *t = &trace[p];
    fprintf(stderr, " | part %d %.1f-%.1f us cpu %.1f us units %lld ranges %llx core %lld", p, t->start / 1e3, t->end / 1e3, t->cpu / 1e3,
      (long long)t->units, (unsigned long long)t->ranges, (long long)t->core);
  }
  fprintf(stderr, "\n");
}

/* Ranges a call is cut into, per part: a part that starts late leaves its ranges to the others. */
#define XK_RANGES_PER_PART 2

/* One call of a kernel, split into parts: each part's fault in faults[p]. The units are
   cut into parts × XK_RANGES_PER_PART equal ranges; part p claims its own ranges first
   (those of the static split, so that a kernel packing what its units need packs no
   more than it did), then any range left, until none is (a part that faults stops).
   Its own ranges, adjacent, it claims together while they are free and runs as one
   call: a kernel streaming its units' columns of a matrix (gemm_c.ts's gemvRoutine)
   then reads each row of it in one run of half its length, not in two of a quarter
   (cold weights came 15-30% slower in quarters, 2026-11-30). */
typedef struct {
  const xk_entry *k; uint8_t *mem; const uint32_t *pointers; const uint32_t *scratch; int64_t begin, end;
  _Atomic int taken[XK_MAX_THREADS * XK_RANGES_PER_PART];
  /* A balanced call's shares (xk_balances). */
  xk_shares shares;
  xk_fault faults[XK_MAX_THREADS];
  /* Parts other than the calling thread's that ran any units. */
  _Atomic int helped;
  /* XLATS_POOL_TRACE: when the call began, and each part's timeline (xk_part_trace). */
  int64_t t0;
  xk_part_trace trace[XK_MAX_THREADS];
} xk_job;

/* Part p's next ranges, of parts × XK_RANGES_PER_PART (*i: its cursor, from 0): its own
   first, adjacent ones claimed together, then any left. 0 when none is left, else 1 with
   the ranges [*first, *last]. */
static int xk_claim(_Atomic int *taken, int p, int parts, int *i, int *first, int *last) {
  int ranges = parts * XK_RANGES_PER_PART;
  for (; *i < ranges; (*i)++) {
    int r = (p * XK_RANGES_PER_PART + *i) % ranges, l = r;
    if (atomic_exchange(&taken[r], 1)) continue;
    while (*i + 1 < XK_RANGES_PER_PART && !atomic_exchange(&taken[l + 1], 1)) { (*i)++; l++; }
    (*i)++;
    *first = r; *last = l;
    return 1;
  }
  return 0;
}

/* Whether a call of k over n units is balanced as it runs (BALANCE; the kernel's grain,
   gemm_plan.ts's gemmBalance): cores run at different speeds under load (one takes the
   interrupts, another process shares it), and a static half each left the faster thread
   waiting up to a quarter of the call (the MLP's products, 2026-12-01). Shares' offsets
   are 32-bit: a call of 2^31 units or more keeps the static ranges. */
static inline int xk_balances(const xk_entry *k, int64_t n) { return k->grain > 0 && n < (INT64_C(1) << 31); }

/* One piece of a balanced call (xk_balanced_part's run): its kernel on [b, e), inside the guard; nonzero once it faulted. */
typedef struct { const xk_entry *k; uint8_t *mem; const uint32_t *args; xk_fault *f; xk_part_trace *t; } xk_piece_ctx;
static int xk_run_piece(void *ctx, int64_t b, int64_t e) {
  xk_piece_ctx *c = (xk_piece_ctx *)ctx;
  c->f->sig = xk_call(c->k, c->mem, c->args, b, e, &c->f->addr);
  c->t->units += e - b;
  return c->f->sig;
}

static void xk_job_part(void *ctx, int p, int parts) {
  xk_job *j = (xk_job *)ctx;
  const xk_entry *k = j->k;
  uint32_t args[XK_MAX_ARGS + 1];
  xk_fault f = { 0, NULL, p };
  memcpy(args, j->pointers, (size_t)k->buffers * sizeof(uint32_t));
  if (k->scratch > 0) args[k->buffers] = j->scratch[p];
  int ranges = parts * XK_RANGES_PER_PART, i = 0, r, last;
  int64_t n = j->end - j->begin;
  xk_part_trace t = xk_trace_begin(j->t0);
  if (parts > 1 && xk_balances(k, n)) {
    xk_piece_ctx c = { k, j->mem, args, &f, &t };
    t.ranges = (int64_t)xk_balanced_part(&j->shares, p, xk_run_piece, &c);
  }
  else while (f.sig == 0 && xk_claim(j->taken, p, parts, &i, &r, &last)) {
    int64_t b = j->begin + n * r / ranges, e = j->begin + n * (last + 1) / ranges;
    if (b < e) f.sig = xk_call(k, j->mem, args, b, e, &f.addr);
    xk_trace_ran(&t, r, last, e - b);
  }
  if (p > 0 && t.units > 0) atomic_fetch_add(&j->helped, 1);
  j->faults[p] = f;
  xk_trace_end(&t, j->t0, &j->trace[p]);
}

/* Runs k on [begin, end) over *parts threads (this one included) of the process's pool;
   *parts becomes the number that ran, *helped the number of them besides this thread
   that ran any units. Every part runs to its end (or its fault) before this returns the
   fault of the first part that faulted, if any. */
static xk_fault xk_run(const xk_entry *k, uint8_t *mem, const uint32_t *pointers, const uint32_t *scratch, int64_t begin, int64_t end, int *parts, int *helped) {
  xk_job j;
  atomic_init(&j.helped, 0);
  j.k = k; j.mem = mem; j.pointers = pointers; j.scratch = scratch; j.begin = begin; j.end = end;
  const xk_guard_api *g = xk_guard;
  if (g == NULL || *parts <= 1) *parts = 1;
  memset(j.faults, 0, sizeof j.faults);
  for (int r = 0; r < *parts * XK_RANGES_PER_PART; r++) atomic_init(&j.taken[r], 0);
  if (*parts > 1 && xk_balances(k, end - begin)) xk_shares_init(&j.shares, begin, end, *parts, k->grain, k->cuts);
  if (xk_trace_on < 0) xk_trace_on = getenv("XLATS_POOL_TRACE") != NULL;
  if (xk_trace_on) { memset(j.trace, 0, sizeof j.trace); j.t0 = xk_now_ns(); }
  if (*parts == 1) xk_job_part(&j, 0, 1);
  else *parts = g->parallel(xk_job_part, &j, *parts);
  if (xk_trace_on && *parts > 1) {
    fprintf(stderr, "xk_pool_trace %s units [%lld, %lld) of %lld, %.1f us", k->name, (long long)begin, (long long)end, (long long)k->extent, (xk_now_ns() - j.t0) / 1e3);
    xk_trace_parts(j.trace, *parts);
  }
  *helped = atomic_load(&j.helped);
  for (int p = 0; p < *parts; p++) if (j.faults[p].sig != 0) return j.faults[p];
  return j.faults[0];
}
`;

const ENTRY = String.raw`
static napi_value xk_fail(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

static int xk_u32_array(napi_env env, napi_value v, uint32_t **data, size_t *length) {
  napi_typedarray_type type; napi_value buffer; size_t offset; void *p;
  if (napi_get_typedarray_info(env, v, &type, length, &p, &buffer, &offset) != napi_ok || type != napi_uint32_array) return 0;
  *data = (uint32_t *)p;
  return 1;
}

/* How a checked call ended (xk_checked_run). */
#define XK_OK 0
#define XK_BAD_CALL 1
#define XK_FAULTED 2

/* Split or not (see MIN_PARALLEL_COST in glue.ts): the parts to run a call (or a row group)
   of cost units cost with, at most parts, by the split timings st; *trial: which way
   this call is timed (-1: not timed). */
static int xk_decide(xk_split_stats *st, const xk_entry *e, double cost, int parts, int *trial) {
  *trial = -1;
  if (parts <= 1 || cost < ${MIN_PARALLEL_COST}.0) return 1;
  if (cost >= ${ALWAYS_PARALLEL_COST}.0 || (e->always_splits && cost >= ${STREAMED_PARALLEL_COST}.0)) return parts;
  uint32_t phase = atomic_fetch_add_explicit(&st->calls, 1, memory_order_relaxed) % ${SPLIT_RETRY_CALLS};
  if (phase == 0) { atomic_store_explicit(&st->best[0], INT64_MAX, memory_order_relaxed); atomic_store_explicit(&st->best[1], INT64_MAX, memory_order_relaxed); atomic_store_explicit(&st->splits, 0, memory_order_relaxed); }
  if (phase < ${2 * SPLIT_TRIALS}) *trial = (int)(phase & 1);
  else if (phase % ${SPLIT_UNSEEN_RETRY} == 0 && atomic_load_explicit(&st->splits, memory_order_relaxed) < ${SPLIT_TRIALS}) *trial = 1;
  int split = *trial >= 0 ? *trial : atomic_load_explicit(&st->best[1], memory_order_relaxed) < atomic_load_explicit(&st->best[0], memory_order_relaxed);
  XK_SEAM_DECIDED(st, *trial, split ? parts : 1);
  return split ? parts : 1;
}

/* Whether xk_decide would split such a call now, without counting it: for the pool's hold. */
static int xk_would_split(xk_split_stats *st, const xk_entry *e, double cost, int parts) {
  if (parts <= 1 || cost < ${MIN_PARALLEL_COST}.0) return 0;
  if (cost >= ${ALWAYS_PARALLEL_COST}.0 || (e->always_splits && cost >= ${STREAMED_PARALLEL_COST}.0)) return 1;
  uint32_t phase = atomic_load_explicit(&st->calls, memory_order_relaxed) % ${SPLIT_RETRY_CALLS};
  if (phase < ${2 * SPLIT_TRIALS}) return 1;
  if (phase % ${SPLIT_UNSEEN_RETRY} == 0 && atomic_load_explicit(&st->splits, memory_order_relaxed) < ${SPLIT_TRIALS}) return 1;
  return atomic_load_explicit(&st->best[1], memory_order_relaxed) < atomic_load_explicit(&st->best[0], memory_order_relaxed);
}

/* A timed call's time, per unit (ns × 1024 / units), so that calls over part of the
   extent (a row group's blocks, the last one shorter) compare with whole ones. */
static void xk_record(xk_split_stats *st, const char *name, int trial, int64_t took, int64_t units) {
  int64_t per = took * 1024 / (units > 0 ? units : 1);
  _Atomic int64_t *best = &st->best[trial];
  if (per < atomic_load_explicit(best, memory_order_relaxed)) atomic_store_explicit(best, per, memory_order_relaxed);
  if (trial == 1) atomic_fetch_add_explicit(&st->splits, 1, memory_order_relaxed);
  XK_SEAM_COUNTED();
  if (xk_trace_on > 0) fprintf(stderr, "xk_pool_trace trial %s %s %.1f us, best alone %.1f split %.1f (us per 1024 units)\n", name, trial ? "split" : "alone", took / 1e3,
    atomic_load(&st->best[0]) / 1e3, atomic_load(&st->best[1]) / 1e3);
}

/* The end of a call xk_decide timed (trial 0: the calling thread alone, 1: split over
   asked parts) that ran on parts of them, helped: the parts besides the calling thread's
   that ran any units, ok: to its end, from t0 (xk_now_ns) on: recorded where it measured
   what it was to. A split trial that the pool ran on fewer parts (busy with another
   caller), or in which another part ran nothing (its thread had no core in time: the
   calling thread claimed every range), timed the calling thread alone plus the hand-off,
   and does not count (see MIN_PARALLEL_COST in glue.ts). Called before anything else
   the call's caller does (a trace line, a profile's sums), which the time would count. */
static void xk_trial_end(xk_split_stats *st, const char *name, int trial, int asked, int parts, int helped, int ok, int64_t t0, int64_t units) {
  if (trial < 0 || !ok || parts != asked || (trial == 1 && helped != parts - 1)) return;
  xk_record(st, name, trial, XK_TRIAL_TOOK(trial, t0), units);
}

/* Checks a call of kernel k on units [begin, end), its buffers at pointers[0 .. buffers),
   against the memory's length, decides its split over at most threads threads (see
   MIN_PARALLEL_COST in glue.ts) and runs it: XK_OK, or XK_BAD_CALL / XK_FAULTED with what
   went wrong in message. */
static int xk_checked_run(const xk_program_t *m, int32_t k, uint8_t *mem, size_t mem_length, const uint32_t *pointers, const uint32_t *scratch, size_t ns,
    int64_t begin, int64_t end, int32_t threads, char *message, size_t message_size) {
  const xk_entry *e = &m->table[k];
  if (begin < 0 || end > e->extent || begin > end) {
    snprintf(message, message_size, "%s: units [%lld, %lld) outside [0, %lld)", e->name, (long long)begin, (long long)end, (long long)e->extent);
    return XK_BAD_CALL;
  }
  int parts = threads < XK_MAX_THREADS ? threads : XK_MAX_THREADS;
  if (end - begin < parts) parts = (int)(end - begin);
  if (e->scratch > 0 && ns < (size_t)parts) parts = (int)ns;
  if (parts < 1) parts = 1;
  int trial;
  parts = xk_decide(&m->split[k], e, (double)(end - begin) * e->cost, parts, &trial);
  /* Bounds, from the kernel's declared access; offsets wrap at 2^32 as in wasm32. */
  for (int32_t i = 0; i < e->buffers; i++) {
    uint64_t rb = e->row_bytes[i], lo, hi;
    if (rb > 0) {
      lo = (uint32_t)((uint64_t)pointers[i] + (uint64_t)begin * rb);
      hi = lo + (uint64_t)(end - begin) * rb;
    } else {
      lo = pointers[i];
      hi = lo + e->bytes[i];
    }
    if (hi > mem_length && end > begin) {
      snprintf(message, message_size, "%s: buffer %d [%llu, %llu) lies outside device memory (%llu bytes)", e->name, (int)i, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)mem_length);
      return XK_BAD_CALL;
    }
  }
  if (e->scratch > 0) {
    if (ns < 1) {
      snprintf(message, message_size, "%s: the kernel takes scratch but none was given", e->name);
      return XK_BAD_CALL;
    }
    for (int p = 0; p < parts; p++) {
      if ((uint64_t)scratch[p] + (uint64_t)e->scratch > mem_length) {
        snprintf(message, message_size, "%s: scratch of thread %d lies outside device memory", e->name, p);
        return XK_BAD_CALL;
      }
    }
  }
  if (end > begin) {
    int asked = parts, helped = 0;
    int64_t t0 = trial >= 0 ? xk_now_ns() : 0;
    xk_fault f = xk_run(e, mem, pointers, scratch, begin, end, &parts, &helped);
    xk_trial_end(&m->split[k], e->name, trial, asked, parts, helped, f.sig == 0, t0, end - begin);
    if (f.sig != 0) {
      const char *what = f.sig == SIGSEGV ? "SIGSEGV (invalid memory access)" : f.sig == SIGBUS ? "SIGBUS (bus error)"
        : f.sig == SIGFPE ? "SIGFPE (arithmetic fault)" : "SIGILL (illegal instruction)";
      snprintf(message, message_size, "%s: %s at address %p, on thread %d of %d, in units [%lld, %lld)",
        e->name, what, f.addr, f.part, parts, (long long)begin, (long long)end);
      return XK_FAULTED;
    }
  }
  return XK_OK;
}

/* Throws what xk_checked_run reported: a RangeError for a bad call, an Error with code XLATS_NATIVE_FAULT for a fault. */
static napi_value xk_throw(napi_env env, int status, const char *message) {
  if (status == XK_FAULTED) napi_throw_error(env, "XLATS_NATIVE_FAULT", message);
  else napi_throw_range_error(env, NULL, message);
  return NULL;
}

static napi_value xk_entry_run(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  char message[256];
  const xk_program_t *m;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&m) != napi_ok || argc != 7) return xk_fail(env, "run: expects 7 arguments");
  int32_t k, threads; int64_t begin, end;
  if (napi_get_value_int32(env, argv[0], &k) != napi_ok || k < 0 || k >= m->count) return xk_fail(env, "run: no such kernel");
  napi_typedarray_type type; size_t mem_length; void *mem; napi_value buffer; size_t offset;
  if (napi_get_typedarray_info(env, argv[1], &type, &mem_length, &mem, &buffer, &offset) != napi_ok || type != napi_uint8_array) return xk_fail(env, "run: memory is not a Uint8Array");
  uint32_t *pointers, *scratch; size_t np, ns;
  if (!xk_u32_array(env, argv[2], &pointers, &np) || !xk_u32_array(env, argv[6], &scratch, &ns)) return xk_fail(env, "run: pointers and scratch must be Uint32Arrays");
  if (napi_get_value_int64(env, argv[3], &begin) != napi_ok || napi_get_value_int64(env, argv[4], &end) != napi_ok || napi_get_value_int32(env, argv[5], &threads) != napi_ok) return xk_fail(env, "run: begin, end and threads must be numbers");
  if (np < (size_t)m->table[k].buffers || m->table[k].buffers > XK_MAX_ARGS) return xk_fail(env, "run: too few pointers");
  int status = xk_checked_run(m, k, (uint8_t *)mem, mem_length, pointers, scratch, ns, begin, end, threads, message, sizeof message);
  return status == XK_OK ? NULL : xk_throw(env, status, message);
}

/* One row group of runCalls: its kernels' calls (member0 .. members) in order on each block of rows. */
typedef struct {
  const xk_program_t *m; uint8_t *mem; size_t mem_length; const uint32_t *scratch; size_t ns; double *times;
  const uint32_t *member0; uint32_t members; int64_t rows, block;
  /* Parts the group was split into (1: run whole, its calls perhaps split one by one), and those besides the calling thread's that ran any rows. */
  int parts;
  _Atomic int helped;
  _Atomic int taken[XK_MAX_THREADS * XK_RANGES_PER_PART];
  /* The first failure: its status (XK_OK: none), kernel and message; the other parts stop at their next call. */
  _Atomic int status; int32_t failed_kernel; char message[256];
  /* Split and timed: per kernel, the calling thread's wall time, in ns. */
  int64_t *spent;
  int64_t t0;
  xk_part_trace trace[XK_MAX_THREADS];
} xk_group;

/* Whether a group may be split as one call (not one kernel over its whole extent: see runCalls). */
static int xk_splits_group(int32_t threads, uint32_t members, int64_t rows, int64_t block) {
  return xk_guard != NULL && threads > 1 && rows > 1 && members >= 1 && (members > 1 || block < rows);
}

/* The most parts a call over rows units may take: threads, and one scratch range a part where it uses scratch. */
static int xk_group_parts(int32_t threads, int64_t rows, int scratched, size_t ns) {
  int64_t parts = threads < XK_MAX_THREADS ? threads : XK_MAX_THREADS;
  if (rows < parts) parts = rows;
  if (scratched && (int64_t)ns < parts) parts = (int64_t)ns;
  return parts < 1 ? 1 : (int)parts;
}

/* Words of one call of a checked list: kernel, time slot, flags, its pointers (and with block buffers, their row bytes). */
static inline size_t xk_call_words(const xk_program_t *m, const uint32_t *c) {
  return 3 + (size_t)m->table[c[0]].buffers * ((c[2] & 1) ? 2 : 1);
}

/* Words of a group's calls (member0: its first; checked already). */
static size_t xk_group_length(const xk_program_t *m, const uint32_t *member0, uint32_t members) {
  const uint32_t *c = member0;
  for (uint32_t i = 0; i < members; i++) c += xk_call_words(m, c);
  return (size_t)(c - member0);
}

/* A group's cost units (its rows through every kernel), and whether it uses scratch (block buffers, or a kernel's own). */
static double xk_group_cost(const xk_program_t *m, const uint32_t *member0, uint32_t members, int64_t rows, int *scratched) {
  double cost = 0;
  *scratched = 0;
  const uint32_t *c = member0;
  for (uint32_t i = 0; i < members; i++) {
    const xk_entry *e = &m->table[c[0]];
    cost += (double)rows * e->cost;
    if ((c[2] & 1) || e->scratch > 0) *scratched = 1;
    c += xk_call_words(m, c);
  }
  return cost;
}

/* Runs rows [b0, e0) of the group in blocks on part p (its scratch range scratch[p]), each
   call over at most threads threads; a failure is recorded in the group. */
static void xk_group_rows(xk_group *gr, int p, int32_t threads, int64_t b0, int64_t e0) {
  const xk_program_t *m = gr->m;
  char message[256];
  for (int64_t b = b0; b < e0; b += gr->block) {
    int64_t e = e0 - b < gr->block ? e0 : b + gr->block;
    const uint32_t *c = gr->member0;
    for (uint32_t i = 0; i < gr->members; i++) {
      if (atomic_load_explicit(&gr->status, memory_order_relaxed) != XK_OK) return;
      int32_t k = (int32_t)c[0];
      uint32_t slot = c[1], flags = c[2];
      int32_t n = m->table[k].buffers;
      const uint32_t *pointers = c + 3;
      uint32_t args[XK_MAX_ARGS];
      /* A buffer holding one block of rows: its offset in the part's scratch, moved back by the
         block's first row (wrapping at 2^32, as the kernel's own arithmetic) so that the block's rows land in it. */
      if (flags & 1) {
        const uint32_t *row_bytes = pointers + n;
        for (int32_t q = 0; q < n; q++) args[q] = row_bytes[q] == 0 ? pointers[q] : gr->scratch[p] + pointers[q] - (uint32_t)((uint64_t)b * row_bytes[q]);
        pointers = args;
      }
      /* Timed: the call's wall time, on the calling thread (of a split group, its part's). */
      int timed = gr->times != NULL && (gr->spent == NULL || p == 0);
      int64_t w0 = timed ? xk_now_ns() : 0;
      int status = xk_checked_run(m, k, gr->mem, gr->mem_length, pointers, gr->scratch + (gr->ns > (size_t)p ? p : 0), gr->ns > (size_t)p ? gr->ns - (size_t)p : 0, b, e, threads, message, sizeof message);
      if (timed && gr->spent == NULL) gr->times[slot] += (double)(xk_now_ns() - w0);
      else if (timed) gr->spent[i] += xk_now_ns() - w0;
      if (status != XK_OK) {
        int none = XK_OK;
        if (atomic_compare_exchange_strong(&gr->status, &none, XK_BAD_CALL)) {
          gr->failed_kernel = k;
          /* The call ran on one thread of a split group: which of the group's parts it was. */
          if (gr->parts > 1) snprintf(gr->message, sizeof gr->message, "%.180s (part %d of %d of a row group split over threads)", message, p, gr->parts);
          else memcpy(gr->message, message, sizeof message);
          atomic_store(&gr->status, status);
        }
        return;
      }
      c += xk_call_words(m, c);
    }
  }
}

/* Part p of a split group: ranges of rows claimed as xk_job_part claims units. */
static void xk_group_part(void *ctx, int p, int parts) {
  xk_group *gr = (xk_group *)ctx;
  int ranges = parts * XK_RANGES_PER_PART, i = 0, r, last;
  xk_part_trace t = xk_trace_begin(gr->t0);
  while (atomic_load_explicit(&gr->status, memory_order_relaxed) == XK_OK && xk_claim(gr->taken, p, parts, &i, &r, &last)) {
    int64_t b = gr->rows * r / ranges, e = gr->rows * (last + 1) / ranges;
    xk_group_rows(gr, p, 1, b, e);
    xk_trace_ran(&t, r, last, e - b);
  }
  if (p > 0 && t.units > 0) atomic_fetch_add(&gr->helped, 1);
  xk_trace_end(&t, gr->t0, &gr->trace[p]);
}

/* XLATS_POOL_TRACE's line for a split group, as xk_run's for a call: its first kernel, its kernels, its rows. */
static void xk_group_trace(const xk_group *gr, int parts) {
  fprintf(stderr, "xk_pool_trace %s group of %u kernels, rows [0, %lld) in blocks of %lld, %.1f us", gr->m->table[gr->member0[0]].name, gr->members,
    (long long)gr->rows, (long long)gr->block, (xk_now_ns() - gr->t0) / 1e3);
  xk_trace_parts(gr->trace, parts);
}

/* runCalls(memory: Uint8Array, calls: Uint32Array, threads, scratch: Uint32Array, times: Float64Array | null):
   a list of kernel calls in one crossing (the executor's runs of consecutive C kernel
   steps; see encodeCalls in glue.ts for the layout). Each call is checked and split as
   run's are. On an error, calls[0] is set to the kernel of the call that failed. */
static napi_value xk_entry_run_calls(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  const xk_program_t *m;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&m) != napi_ok || argc != 5) return xk_fail(env, "runCalls: expects 5 arguments");
  napi_typedarray_type type; size_t mem_length; void *mem; napi_value buffer; size_t offset;
  if (napi_get_typedarray_info(env, argv[0], &type, &mem_length, &mem, &buffer, &offset) != napi_ok || type != napi_uint8_array) return xk_fail(env, "runCalls: memory is not a Uint8Array");
  uint32_t *calls, *scratch; size_t nc, ns;
  if (!xk_u32_array(env, argv[1], &calls, &nc) || !xk_u32_array(env, argv[3], &scratch, &ns)) return xk_fail(env, "runCalls: calls and scratch must be Uint32Arrays");
  int32_t threads;
  if (napi_get_value_int32(env, argv[2], &threads) != napi_ok) return xk_fail(env, "runCalls: threads must be a number");
  double *times = NULL; size_t nt = 0;
  napi_valuetype tt;
  if (napi_typeof(env, argv[4], &tt) != napi_ok) return xk_fail(env, "runCalls: bad times");
  if (tt != napi_null && tt != napi_undefined) {
    if (napi_get_typedarray_info(env, argv[4], &type, &nt, (void **)&times, &buffer, &offset) != napi_ok || type != napi_float64_array) return xk_fail(env, "runCalls: times must be a Float64Array");
  }
  if (nc < 2) return xk_fail(env, "runCalls: no call list");
  /* The list is checked as it is read: a short or inconsistent one is a RangeError before its first call. */
  size_t at = 2;
  /* The last group that will be split, if any: the pool is held awake until it has run (xk_pool_hold). */
  int64_t hold_until = -1;
  for (uint32_t g = 0; g < calls[1]; g++) {
    if (at + 3 > nc || calls[at + 1] == 0) return xk_fail(env, "runCalls: a malformed group");
    size_t p = at + 3;
    int64_t rows = calls[at], block = calls[at + 1];
    uint32_t members = calls[at + 2];
    for (uint32_t i = 0; i < members; i++) {
      if (p + 3 > nc || calls[p] >= (uint32_t)m->count) return xk_fail(env, "runCalls: a malformed call");
      const xk_entry *e = &m->table[calls[p]];
      size_t n = (size_t)e->buffers * ((calls[p + 2] & 1) ? 2 : 1);
      if (e->buffers > XK_MAX_ARGS || p + 3 + n > nc) return xk_fail(env, "runCalls: a malformed call");
      if (times != NULL && (size_t)calls[p + 1] >= nt) return xk_fail(env, "runCalls: a call's time slot is outside times");
      if ((calls[p + 2] & 1) && ns < 1) return xk_fail(env, "runCalls: block buffers need scratch");
      p += 3 + n;
    }
    int scratched;
    double cost = xk_group_cost(m, calls + at + 3, members, rows, &scratched);
    /* One kernel over its whole extent: xk_checked_run decides its split (its own scratch per part). */
    if (members == 1 && block >= rows && xk_guard != NULL && xk_would_split(&m->split[calls[at + 3]], &m->table[calls[at + 3]], cost, xk_group_parts(threads, rows, m->table[calls[at + 3]].scratch > 0, ns))) hold_until = g;
    if (xk_splits_group(threads, members, rows, block) && xk_would_split(&m->split[calls[at + 3]], &m->table[calls[at + 3]], cost, xk_group_parts(threads, rows, scratched, ns))) hold_until = g;
    at = p;
  }
  at = 2;
  if (hold_until >= 0) xk_guard->hold(1);
  if (xk_trace_on < 0) xk_trace_on = getenv("XLATS_POOL_TRACE") != NULL;
  if (xk_trace_on) fprintf(stderr, "xk_pool_trace runCalls %u groups, held until group %lld\n", calls[1], (long long)hold_until);
  xk_group gr;
  gr.m = m; gr.mem = (uint8_t *)mem; gr.mem_length = mem_length; gr.scratch = scratch; gr.ns = ns; gr.times = times;
  for (uint32_t g = 0; g < calls[1]; g++) {
    int64_t rows = calls[at], block = calls[at + 1];
    uint32_t members = calls[at + 2];
    size_t first = at + 3;
    int scratched;
    double cost = xk_group_cost(m, calls + first, members, rows, &scratched);
    size_t p = first + xk_group_length(m, calls + first, members);
    gr.member0 = calls + first; gr.members = members; gr.rows = rows; gr.block = block; gr.spent = NULL; gr.parts = 1;
    atomic_store(&gr.status, XK_OK);
    /* A group of several kernels, or of one in blocks, is split as one call (as the
       WebAssembly pool's runGroup): each thread runs its rows block by block through every
       kernel, and reads rows it wrote itself, instead of every block being a split call of
       its own (parts of a few microseconds, each a hand-off: GPT-2's layer norms and
       heads' transposes ran 2x slower at two threads so, 2026-12-01). One kernel over its
       whole extent is split by xk_checked_run (its trace, its own scratch per thread). */
    int parts = 1, trial = -1, whole = xk_splits_group(threads, members, rows, block);
    if (whole) parts = xk_decide(&m->split[calls[first]], &m->table[calls[first]], cost, xk_group_parts(threads, rows, scratched, ns), &trial);
    int asked = parts, helped = 0, split = parts > 1;
    int64_t t0 = trial >= 0 || times != NULL ? xk_now_ns() : 0;
    if (!split) {
      /* Decided whole, the group's calls are not split one by one either. */
      xk_group_rows(&gr, 0, whole ? 1 : threads, 0, rows);
    } else {
      for (int r = 0; r < parts * XK_RANGES_PER_PART; r++) atomic_init(&gr.taken[r], 0);
      if (times != NULL && (gr.spent = calloc((size_t)members, sizeof(int64_t))) == NULL) parts = 1;
      if (xk_trace_on < 0) xk_trace_on = getenv("XLATS_POOL_TRACE") != NULL;
      if (xk_trace_on) { memset(gr.trace, 0, sizeof gr.trace); gr.t0 = t0 = xk_now_ns(); }
      gr.parts = parts;
      atomic_store(&gr.helped, 0);
      if (parts > 1) parts = xk_guard->parallel(xk_group_part, &gr, parts);
      else xk_group_part(&gr, 0, 1);
      helped = atomic_load(&gr.helped);
    }
    xk_trial_end(&m->split[calls[first]], m->table[calls[first]].name, trial, asked, parts, helped, atomic_load(&gr.status) == XK_OK, t0, rows);
    if (xk_trace_on && parts > 1) xk_group_trace(&gr, parts);
    if (gr.spent != NULL) {
      /* Each kernel's wall time of the calling thread's part; the rest of the group's
         (handing parts out, waiting for them) counts to its last kernel. */
      int64_t wall = xk_now_ns() - t0;
      const uint32_t *c = gr.member0;
      for (uint32_t i = 0; i < members; i++) {
        times[c[1]] += (double)gr.spent[i];
        wall -= gr.spent[i];
        if (i + 1 == members) times[c[1]] += (double)wall;
        c += xk_call_words(m, c);
      }
      free(gr.spent);
    }
    if (atomic_load(&gr.status) != XK_OK) {
      if (hold_until >= (int64_t)g) xk_guard->hold(0);
      calls[0] = (uint32_t)gr.failed_kernel;
      return xk_throw(env, atomic_load(&gr.status), gr.message);
    }
    if (hold_until == (int64_t)g) xk_guard->hold(0);
    at = p;
  }
  return NULL;
}

/* installGuard(): installs the process's signal handler (once); from then on every program's kernels run inside the guard, and on the pool. */
static napi_value xk_install_guard(napi_env env, napi_callback_info info) {
  (void)info;
  pthread_once(&xk_guard_once, xk_guard_install);
  if (!xk_guard_ok) return xk_fail(env, "installGuard: sigaction failed");
  xk_guard = &xk_guard_own;
  return NULL;
}

/* adviseHugePages(memory: Uint8Array): asks the kernel to back the device memory's pages
   with transparent huge pages (madvise MADV_HUGEPAGE over its whole pages; the kernel makes
   huge pages of the 2 MiB-aligned stretches inside). Pages already touched stay small
   until the kernel's khugepaged merges them; new ones fault in 2 MiB at a time. Returns
   the bytes advised: 0 where the system has no such advice or refuses it. */
static napi_value xk_advise_huge_pages(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], advised;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1) return xk_fail(env, "adviseHugePages: expects the device memory");
  napi_typedarray_type type; size_t length; void *mem; napi_value buffer; size_t offset;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &mem, &buffer, &offset) != napi_ok || type != napi_uint8_array) return xk_fail(env, "adviseHugePages: memory is not a Uint8Array");
  double bytes = 0;
#ifdef MADV_HUGEPAGE
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = ((uintptr_t)mem + page - 1) & ~(page - 1), hi = ((uintptr_t)mem + length) & ~(page - 1);
  if (hi > lo && madvise((void *)lo, hi - lo, MADV_HUGEPAGE) == 0) bytes = (double)(hi - lo);
#endif
  if (napi_create_double(env, bytes, &advised) != napi_ok) return NULL;
  return advised;
}

/* Sets exports[name] to a function of f with the program m as its data. */
static int xk_export(napi_env env, napi_value exports, const char *name, napi_callback f, void *m) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, f, m, &fn) == napi_ok && napi_set_named_property(env, exports, name, fn) == napi_ok;
}

/* load(path): the program module at path (a shared object of its kernels and their table,
   glueTableSource) loaded, its { run, runCalls, adviseHugePages, kernels }. A library function a kernel calls
   is bound now (RTLD_NOW), from the process's C library: a missing one is an Error here,
   not a crash in a later call. RTLD_LOCAL: programs' symbols never bind to each other. */
static napi_value xk_load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  char path[4096], message[512];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1) return xk_fail(env, "load: expects a path");
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok || length + 1 >= sizeof path) return xk_fail(env, "load: the path is not a string of under 4096 bytes");
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    snprintf(message, sizeof message, "load: %s", why == NULL ? "dlopen failed" : why);
    napi_throw_error(env, NULL, message);
    return NULL;
  }
  /* The handle is never closed: a program's kernels stay loaded for the process, as Node's own modules do. */
  const xk_program_t *m = (const xk_program_t *)dlsym(handle, "xk_program");
  if (m == NULL || strcmp(m->abi, XK_ABI) != 0) {
    snprintf(message, sizeof message, "load: %s is not a program module of glue %s", path, XK_ABI);
    napi_throw_error(env, NULL, message);
    return NULL;
  }
  napi_value exports, count;
  if (napi_create_object(env, &exports) != napi_ok) return NULL;
  if (!xk_export(env, exports, "run", xk_entry_run, (void *)m) || !xk_export(env, exports, "runCalls", xk_entry_run_calls, (void *)m)
    || !xk_export(env, exports, "adviseHugePages", xk_advise_huge_pages, NULL)) return NULL;
  if (napi_create_int32(env, m->count, &count) != napi_ok || napi_set_named_property(env, exports, "kernels", count) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE_INIT() {
  napi_value abi;
  if (!xk_export(env, exports, "load", xk_load, NULL) || !xk_export(env, exports, "installGuard", xk_install_guard, NULL) || !XK_SEAM_EXPORTS(env, exports)) return NULL;
  if (napi_create_string_utf8(env, XK_ABI, NAPI_AUTO_LENGTH, &abi) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "abi", abi) != napi_ok) return NULL;
  return exports;
}
`;

/**
 * The split trials' test seam, compiled only into a glue a test builds
 * (glueModuleSource({ testSeam: true }); test/compiler/native/split_trials.test.ts): the
 * trials' bookkeeping (xk_decide, xk_trial_end, xk_record) depends on whether the pool's
 * thread came in time and on the clock, which a test on a shared machine controls
 * neither of. A script gives, per measured call (each call xk_decide times, or decides by
 * the trials, in the order they come), how the pool's thread takes part in it if it is
 * split (0: as it comes; 1: it runs its part, and whatever it claims beyond it, before
 * the calling thread starts its own; 2: not at all: it waits until the calling thread has
 * closed the call) and the times its trial reads alone and split (ns), in place of the
 * clock's; past the script's end, calls run as they come and trials read the clock. A log
 * keeps per measured call its trial (-1: none), the parts decided, whether its trial
 * counted (xk_record), and the split trials counted before it. The glue programs run
 * with has the hooks as empty macros (SEAM_OFF): none of this is in it.
 */
const SEAM_ON = String.raw`
#define XK_SEAM_CALLS 8192
static struct {
  _Atomic int at;          /* the measured call now (-1: none yet) */
  int scripted;            /* measured calls the script covers */
  double script[XK_SEAM_CALLS][3];
  double log[XK_SEAM_CALLS][4];
  _Atomic uint64_t helped; /* the pool's call (its generation) that the pool's thread last ran first (mode 1) */
} xk_seam = { .at = -1 };

static int xk_seam_mode(void) {
  int at = atomic_load(&xk_seam.at);
  return at >= 0 && at < xk_seam.scripted ? (int)xk_seam.script[at][0] : 0;
}

/* xk_decide's: a measured call, its trial and parts. */
static void xk_seam_decided(xk_split_stats *st, int trial, int parts) {
  int at = atomic_load(&xk_seam.at) + 1;
  if (at >= XK_SEAM_CALLS) return;
  double *l = xk_seam.log[at];
  l[0] = trial; l[1] = parts; l[2] = 0; l[3] = atomic_load(&st->splits);
  atomic_store(&xk_seam.at, at);
}
#define XK_SEAM_DECIDED(st, trial, parts) xk_seam_decided(st, trial, parts)
#define XK_SEAM_COUNTED() do { int at_ = atomic_load(&xk_seam.at); if (at_ >= 0 && at_ < XK_SEAM_CALLS) xk_seam.log[at_][2] = 1; } while (0)
/* The pool's thread, in mode 2, waits until the call it is part of has been closed (it then runs nothing). */
#define XK_SEAM_HOLD_HELPER(call, word) do { if (xk_seam_mode() == 2) while (atomic_load(call) == (word)) sched_yield(); } while (0)
#define XK_SEAM_HELPER_DONE(word) do { if (xk_seam_mode() == 1) atomic_store(&xk_seam.helped, (word) >> 16); } while (0)
/* The calling thread, in mode 1, starts its part once the pool's thread has ended its. */
#define XK_SEAM_AWAIT_HELPER(generation) do { if (xk_seam_mode() == 1) while (atomic_load(&xk_seam.helped) != (generation)) sched_yield(); } while (0)
#define XK_TRIAL_TOOK(trial, t0) xk_seam_took(trial, t0)
static int64_t xk_seam_took(int trial, int64_t t0) {
  int at = atomic_load(&xk_seam.at);
  return at >= 0 && at < xk_seam.scripted ? (int64_t)xk_seam.script[at][1 + trial] : xk_now_ns() - t0;
}

/* seam(script: Float64Array): [mode, alone ns, split ns] per measured call from now on; the log starts again. */
static napi_value xk_seam_set(napi_env env, napi_callback_info info) {
  size_t argc = 1, length; napi_value argv[1], buffer; napi_typedarray_type type; void *data; size_t offset;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 || napi_get_typedarray_info(env, argv[0], &type, &length, &data, &buffer, &offset) != napi_ok
      || type != napi_float64_array || length % 3 != 0 || length / 3 > XK_SEAM_CALLS) {
    napi_throw_range_error(env, NULL, "seam: expects a Float64Array of [mode, alone ns, split ns] per call");
    return NULL;
  }
  memcpy(xk_seam.script, data, length * sizeof(double));
  xk_seam.scripted = (int)(length / 3);
  atomic_store(&xk_seam.at, -1);
  return NULL;
}

/* seamLog(): [trial, parts, counted, split trials counted before] per measured call since seam(). */
static napi_value xk_seam_get(napi_env env, napi_callback_info info) {
  (void)info;
  int n = atomic_load(&xk_seam.at) + 1;
  napi_value buffer, array; void *data;
  if (napi_create_arraybuffer(env, (size_t)n * 4 * sizeof(double), &data, &buffer) != napi_ok) return NULL;
  memcpy(data, xk_seam.log, (size_t)n * 4 * sizeof(double));
  return napi_create_typedarray(env, napi_float64_array, (size_t)n * 4, buffer, 0, &array) == napi_ok ? array : NULL;
}

static int xk_seam_exports(napi_env env, napi_value exports) {
  napi_value set, get;
  return napi_create_function(env, "seam", NAPI_AUTO_LENGTH, xk_seam_set, NULL, &set) == napi_ok && napi_set_named_property(env, exports, "seam", set) == napi_ok
    && napi_create_function(env, "seamLog", NAPI_AUTO_LENGTH, xk_seam_get, NULL, &get) == napi_ok && napi_set_named_property(env, exports, "seamLog", get) == napi_ok;
}
#define XK_SEAM_EXPORTS(env, exports) xk_seam_exports(env, exports)
`;

/** The seam's hooks in the glue programs run with: nothing, and the trials' times from the clock. */
const SEAM_OFF = String.raw`
#define XK_SEAM_DECIDED(st, trial, parts) ((void)0)
#define XK_SEAM_COUNTED() ((void)0)
#define XK_SEAM_HOLD_HELPER(call, word) ((void)0)
#define XK_SEAM_HELPER_DONE(word) ((void)0)
#define XK_SEAM_AWAIT_HELPER(generation) ((void)0)
#define XK_TRIAL_TOOK(trial, t0) (xk_now_ns() - (t0))
#define XK_SEAM_EXPORTS(env, exports) 1
`;

/** The version of what the glue and a program module agree on (SHARED_TYPES): the glue loads only program modules of its own version. */
export const GLUE_ABI = "xlats-native-10";

/**
 * What the glue and a program module agree on: a kernel's table entry, its split
 * timings, and the program as the glue finds it in the module (its one exported symbol,
 * `xk_program`).
 */
const SHARED_TYPES = String.raw`
#include <stdint.h>
typedef void (*xk_fn)(uint8_t *, const uint32_t *, int64_t, int64_t);
typedef struct {
  xk_fn fn; const char *name; int32_t buffers; int64_t scratch; int64_t extent; double cost;
  const uint64_t *bytes; const uint64_t *row_bytes;
  /* Units a balanced split's pieces keep together where they can (xk_balances; 0: a static
     share a thread), whether a thread's last grain may be cut (BALANCE), and whether every
     call of at least STREAMED_PARALLEL_COST splits untried (SplitBalance's alwaysSplits). */
  int64_t grain; int32_t cuts, always_splits;
} xk_entry;
/* Each kernel's timings of the calling thread alone (best[0]) and split (best[1]), in ns, and the split trials that counted since the last reset. */
typedef struct { _Atomic uint32_t calls, splits; _Atomic int64_t best[2]; } xk_split_stats;
typedef struct { const char *abi; int32_t count; const xk_entry *table; xk_split_stats *split; } xk_program_t;
`;

/**
 * The glue: the guard, the pool, the call checker and the entry points, the same for
 * every program. It is built once per toolchain and Node version into a Node-API module
 * (toolchain.ts), which a process loads once and which loads each program's module:
 * its headers (Node-API, pthreads, signals, stdio) cost a C compiler more than a typical
 * program's kernels do, and its link, against the C library, more than a program's.
 */
export function glueModuleSource(options: { readonly testSeam?: boolean } = {}): string {
  return [`#define NAPI_VERSION 8
#define _GNU_SOURCE
#include <sched.h>
#include <node_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>`, SHARED_TYPES, GUARD, POOL_CLOCK, options.testSeam === true ? SEAM_ON : SEAM_OFF, POOL, BALANCE, KERNELS, `#define XK_ABI ${JSON.stringify(GLUE_ABI)}`, ENTRY].join("\n");
}

/** A program module's own part of the glue: its kernels' table, after their definitions, as the exported `xk_program`. */
export function glueTableSource(kernels: readonly GlueKernel[]): string {
  const lines = [SHARED_TYPES];
  kernels.forEach((k, i) => {
    const list = (xs: readonly number[]): string => (xs.length === 0 ? "0" : xs.map((x) => `${x}ull`).join(", "));
    lines.push(`static const uint64_t xk_bytes_${i}[] = { ${list(k.buffers.map((b) => b.bytes))} };`);
    lines.push(`static const uint64_t xk_rows_${i}[] = { ${list(k.buffers.map((b) => b.rowBytes))} };`);
  });
  const entries = kernels.map((k, i) =>
    `  { ${k.symbol}, ${JSON.stringify(k.symbol)}, ${k.buffers.length}, ${k.scratchBytes}, ${k.parallelExtent}, ${k.costPerUnit}, xk_bytes_${i}, xk_rows_${i}, ${k.balance.grain}, ${k.balance.cutsGrain ? 1 : 0}, ${k.balance.alwaysSplits ? 1 : 0} },`);
  // A module with no kernels (the toolchain's probe) still has a valid table.
  if (entries.length === 0) entries.push("  { 0, \"\", 0, 0, 0, 0, 0, 0, 0, 0, 0 },");
  lines.push(`static const xk_entry xk_table[] = {\n${entries.join("\n")}\n};`);
  lines.push(`static xk_split_stats xk_split[${Math.max(1, kernels.length)}];`);
  lines.push(`const xk_program_t xk_program = { ${JSON.stringify(GLUE_ABI)}, ${kernels.length}, xk_table, xk_split };`);
  return lines.join("\n");
}
