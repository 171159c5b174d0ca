/* progress.h: one line of progress on stderr for the long-running commands
 * (trial, profile, tune): what runs now, time spent and time left.
 *
 * Only when stderr is a terminal: otherwise every call here prints nothing
 * (a log or a pipe gets no extra lines).  A ticker thread redraws the line
 * twice a second while a program runs; it writes with write(2) only, never
 * through stdio or malloc, so a fork beside it is safe.
 */
#ifndef PREFAULT_PROGRESS_H
#define PREFAULT_PROGRESS_H

/* Start (tool: "prefault trial"); a no-op unless stderr is a terminal. */
void progress_begin(const char *tool);
/* Is the line shown at all? */
int progress_on(void);
/* Runs expected in all, those done included; more can be added later. */
void progress_plan(int runs);
void progress_plan_more(int runs);
/* An initial guess of one run's length, before any has finished. */
void progress_guess(double secs);
/* The whole job must end by this time (mono_s() clock); 0: no bound. */
void progress_deadline(double t);
/* What the job is doing: what (e.g. "candidate 3 of 9: populate 4M") and
 * step (e.g. "pair 2 of 5, with the policy").  Either may be NULL. */
void progress_what(const char *what);
void progress_step(const char *step);
/* A run starts; a run of secs ended. */
void progress_run_start(void);
void progress_run_done(double secs);
/* A message on stderr, the progress line redrawn below it. */
void progress_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clear the line and stop the ticker. */
void progress_end(void);
/* Seconds on the monotonic clock. */
double mono_s(void);
/* Mean length of a finished run, or the guess; 0 if neither. */
double progress_run_estimate(void);
#endif
