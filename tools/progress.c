/* progress.c: see progress.h. */
#include "progress.h"
#include "fmt.h"
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static struct {
	int on, have_thread, stop, shown, running;
	pthread_t tid;
	char tool[32], what[200], step[120];
	double t0, run_t0, sum_runs, guess, deadline;
	int runs_total, runs_done;
} P;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(const char *s, size_t n) { write_all(2, s, n); }

/* 42s, 3m05s, 1h02m */
static void dur(char *out, size_t cap, double s)
{
	long t = s < 0 ? 0 : (long)(s + 0.5);
	if (t < 60)
		snprintf(out, cap, "%lds", t);
	else if (t < 3600)
		snprintf(out, cap, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

static double estimate_locked(void)
{
	if (P.runs_done)
		return P.sum_runs / P.runs_done;
	return P.guess;
}

/* With the lock held. */
static void draw(void)
{
	char line[600], spent[24], left[24], tail[80];
	double now = mono_s(), mean = estimate_locked(), rest = -1;
	struct winsize ws;
	int n, width = 80;
	if (!P.on)
		return;
	dur(spent, sizeof spent, now - P.t0);
	if (mean > 0 && P.runs_total > 0) {
		int todo = P.runs_total - P.runs_done;
		double cur = P.running ? now - P.run_t0 : 0;
		rest = todo * mean - (cur < mean ? cur : mean);
		if (rest < 0)
			rest = 0;
	}
	if (P.deadline > 0 && (rest < 0 || rest > P.deadline - now))
		rest = P.deadline - now;
	if (rest >= 0) {
		dur(left, sizeof left, rest);
		snprintf(tail, sizeof tail, "%s spent, about %s left", spent, left);
	} else {
		snprintf(tail, sizeof tail, "%s spent", spent);
	}
	/* The times first: a narrow terminal cuts the end of the line. */
	n = snprintf(line, sizeof line, "\r\033[K%s: %s%s%s%s%s", P.tool, tail, P.what[0] ? "; " : "", P.what,
	             P.step[0] ? "; " : "", P.step);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		width = ws.ws_col;
	/* "\r\033[K" takes no columns; keep the cursor off the last one. */
	if (n - 4 > width - 1)
		n = width - 1 + 4;
	put(line, (size_t)n);
	P.shown = 1;
}

static void clear_locked(void)
{
	if (P.shown)
		put("\r\033[K", 4);
	P.shown = 0;
}

static void *ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!P.stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500 * 1000 * 1000;
		if (ts.tv_nsec >= 1000 * 1000 * 1000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000 * 1000 * 1000;
		}
		pthread_cond_timedwait(&wake, &lock, &ts);
		if (!P.stop)
			draw();
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void progress_begin(const char *tool)
{
	sigset_t all, old;
	if (P.on)
		return;
	memset(&P, 0, sizeof P);
	snprintf(P.tool, sizeof P.tool, "%s", tool);
	P.t0 = mono_s();
	if (!isatty(2))
		return; /* the figures are kept (tune's budget uses them), nothing is drawn */
	P.on = 1;
	/* The ticker takes no signals: they are the main thread's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	P.have_thread = pthread_create(&P.tid, NULL, ticker, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int progress_on(void) { return P.on; }

#define LOCKED(stmt)                                                                                                   \
	do {                                                                                                               \
		pthread_mutex_lock(&lock);                                                                                     \
		stmt;                                                                                                          \
		pthread_mutex_unlock(&lock);                                                                                   \
	} while (0)

void progress_plan(int runs) { LOCKED(P.runs_total = runs); }
void progress_plan_more(int runs) { LOCKED(P.runs_total += runs); }
void progress_guess(double secs) { LOCKED(P.guess = secs); }
void progress_deadline(double t) { LOCKED(P.deadline = t); }
void progress_what(const char *what) { LOCKED(snprintf(P.what, sizeof P.what, "%s", what ? what : "")); }
void progress_step(const char *step) { LOCKED(snprintf(P.step, sizeof P.step, "%s", step ? step : ""); draw()); }
void progress_run_start(void) { LOCKED(P.running = 1; P.run_t0 = mono_s(); draw()); }

void progress_run_done(double secs)
{
	LOCKED(P.running = 0; P.runs_done++; P.sum_runs += secs; if (P.runs_done > P.runs_total) P.runs_total = P.runs_done);
}

double progress_run_estimate(void)
{
	double e;
	pthread_mutex_lock(&lock);
	e = estimate_locked();
	pthread_mutex_unlock(&lock);
	return e;
}

void progress_say(const char *fmt, ...)
{
	va_list ap;
	char buf[4096];
	int n;
	va_start(ap, fmt);
	if (!P.on) {
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		return;
	}
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	pthread_mutex_lock(&lock);
	clear_locked();
	put(buf, (size_t)n);
	pthread_mutex_unlock(&lock);
}

void progress_end(void)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&lock);
	P.stop = 1;
	pthread_cond_signal(&wake);
	clear_locked();
	pthread_mutex_unlock(&lock);
	if (P.have_thread)
		pthread_join(P.tid, NULL);
	P.on = 0;
}
