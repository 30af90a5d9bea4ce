/*
 * capture_int.h -- what capture.c (the transcript walker and writer) and
 * capture_class.c (the shell command classifier) share. Private to the
 * two; capture.h is the interface to the rest.
 */
#ifndef CAIRN_CAPTURE_INT_H
#define CAIRN_CAPTURE_INT_H

#include <stddef.h>

#include "capture.h"

/*
 * Classify every part of a command; the parts before and after `||` and
 * background jobs are left out (their success is not shown). Fills up to
 * max classes with a kind, one per key, best first (deploy, access, build);
 * setup (when not NULL) gets the set-up parts, joined by " && ". Returns
 * the number of classes; 0 on no memory as well.
 */
size_t capture_classify_all(const char *cmd, struct capture_class *out,
			    size_t max, char *setup, size_t setupsize);

#endif
