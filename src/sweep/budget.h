/* A sweep's budget: what it may spend (trials, time), what it has spent, what is left and what
 * a resume owes. Pure: no I/O, no clock (the caller passes the time), no sweep. Every change
 * to a budget counter goes through these functions. */
#ifndef FLAGTUNE_BUDGET_H
#define FLAGTUNE_BUDGET_H

typedef struct {
  int trials;          /* trials that count against the budget (--trials, budget.trials) */
  int search;          /* of which the search may spend: trials less the confirmation's */
  int counted;         /* trials started (or ended) that count */
  int confirm_counted; /* confirmation trials among the counted (they are not search) */
  int done;            /* trials ended that count */
  double deadline;     /* monotonic seconds; 0: no time budget */
  int deadline_hit;    /* the time budget ran out */
  int max_requeue;     /* lost trials one run may queue again */
  int requeued;        /* lost trials this run queued again (past max_requeue: refused ones) */
  int lost_left;       /* lost trials left for `resume` (they count: the sweep ends) */
} budget;

/* Lost trials re-queued per run: MAX_LOSS_EVENTS allocation events (an allocation ending, a
 * preemption), each losing up to `parallel` trials at once. */
enum { BUDGET_MAX_LOSS_EVENTS = 8 };

/* A budget of TRIALS trials run PARALLEL at a time, of which CONFIRM (the confirmation's
 * repeats times its top + 1; 0: none) are kept for the confirmation when the search keeps at
 * least twice as many beside the baseline; HOURS > 0 ends it at NOW + HOURS. */
void budget_init(budget *b, int trials, int confirm, int parallel, double hours, double now);
/* The time budget: HOURS > 0 from NOW, else none. */
void budget_set_hours(budget *b, double hours, double now);
/* An end that comes from outside (a Slurm allocation's time limit): the deadline becomes END
 * unless the time budget ends first. Returns 1 when END is now the deadline. */
int budget_end_by(budget *b, double end);

/* Whether one more trial may start by the trial budget. */
int budget_has_room(const budget *b);
/* Search trials the search budget still allows (0 when spent). */
int budget_search_left(const budget *b);
/* Trials of the whole budget not yet counted (may be negative after a smaller --trials). */
int budget_left(const budget *b);
/* Whether confirmation trials are kept out of the search budget. */
int budget_confirms(const budget *b);
/* Trials the confirmation plan does not need, given back to the search. */
void budget_give_back(budget *b, int n);

/* A trial starts (CONFIRM: a confirmation trial). */
void budget_start(budget *b, int confirm);
/* A started trial that does not count after all: it could not start, it was interrupted, it
 * was queued again, its result could not be stored. */
void budget_uncount(budget *b, int confirm);
/* A started trial ended and counts. */
void budget_end(budget *b);
/* Whether a trial that ended so counts: not when interrupted, queued again, or unstored. */
int budget_counts(int interrupted, int requeued, int store_err);

/* A lost trial may be queued again: returns 1 while under max_requeue; else 0, with *FIRST
 * set on the first refusal (to say so once). Call budget_requeued once it is queued. */
int budget_may_requeue(budget *b, int *first);
void budget_requeued(budget *b);
/* A lost trial stays lost, for `resume`. */
void budget_lost(budget *b);

/* What a resume owes: COUNTED trials (CONFIRM_COUNTED of them confirmation) ended before. */
void budget_resume(budget *b, int counted, int confirm_counted);
/* minimize: COUNTED trials are behind it, QUEUED in its next batch; the budget is theirs. */
void budget_batch(budget *b, int counted, int queued);

/* Seconds left of the time budget at NOW (< 0: none; 0: spent). */
double budget_time_left(const budget *b, double now);
/* The deadline's timer fired: nothing more starts. */
void budget_deadline_reached(budget *b);
int budget_deadline_hit(const budget *b);
/* Whether a trial predicted to take PREDICTED_S seconds (NaN: nothing measured yet) can
 * finish by the deadline when started at NOW. */
int budget_fits(const budget *b, double now, double predicted_s);
/* Whether the time budget (or the fear of overrunning it) left trials unspent, with the
 * strategy not EXHAUSTED. */
int budget_cut_by_time(const budget *b, int exhausted);
/* Ended trials as the live view shows them: at most the budget. */
int budget_done_shown(const budget *b);

#endif
