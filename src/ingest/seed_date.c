/*
 * seed_date.c -- the date forms of decision records (docs/SEED.md,
 * "Dates"): ISO, numeric with slashes, dots or dashes, English
 * month names and Chinese, as the record time "YYYY-MM-DD".
 *
 * Layer: pure functions, used by seed.c.
 *
 * Must never: guess a day/month order silently. A numeric a/b/YYYY date
 * whose order cannot be told from the numbers is marked ambiguous; seed.c
 * decides it from the other dates of the run and prints a warning.
 */
#include <string.h>

#include "internal.h"
#include "seed_int.h"

static int days_in(int y, int m)
{
	static const int d[12] = { 31, 28, 31, 30, 31, 30,
				   31, 31, 30, 31, 30, 31 };

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[m - 1];
}

static int valid(int y, int m, int d)
{
	return y >= 1900 && y <= 2199 && m >= 1 && m <= 12 && d >= 1 &&
	       d <= days_in(y, m);
}

/* "YYYY-MM-DD" of a date valid() accepted (digit by digit: no printf
 * width the compiler cannot bound). */
static void put_iso(struct seed_date *out, int y, int m, int d)
{
	char *o = out->iso;

	o[0] = (char)('0' + y / 1000 % 10);
	o[1] = (char)('0' + y / 100 % 10);
	o[2] = (char)('0' + y / 10 % 10);
	o[3] = (char)('0' + y % 10);
	o[4] = '-';
	o[5] = (char)('0' + m / 10 % 10);
	o[6] = (char)('0' + m % 10);
	o[7] = '-';
	o[8] = (char)('0' + d / 10 % 10);
	o[9] = (char)('0' + d % 10);
	o[10] = '\0';
}

/* Read up to max digits at *p (< e); -1 if none. */
static int num(const char **p, const char *e, int max)
{
	int v = 0, k = 0;

	while (*p < e && **p >= '0' && **p <= '9' && k < max) {
		v = v * 10 + (**p - '0');
		(*p)++;
		k++;
	}
	if (k == 0 || (*p < e && **p >= '0' && **p <= '9'))
		return -1; /* none, or too many digits */
	return v;
}

/* A month name (or its three-letter start) at *p; 1-12, else 0. */
static int month_name(const char **p, const char *e)
{
	static const char *const names[12] = {
		"january", "february", "march",     "april",   "may",      "june",
		"july",    "august",   "september", "october", "november", "december",
	};
	const char *s = *p;
	size_t n = 0, i;

	while (s + n < e && ((s[n] >= 'a' && s[n] <= 'z') ||
			     (s[n] >= 'A' && s[n] <= 'Z')))
		n++;
	if (n < 3)
		return 0;
	for (i = 0; i < 12; i++) {
		size_t full = strlen(names[i]);

		if ((n == full && seed_word_eq(s, n, names[i])) ||
		    (n == 3 && seed_lower((unsigned char)s[0]) == names[i][0] &&
		     seed_lower((unsigned char)s[1]) == names[i][1] &&
		     seed_lower((unsigned char)s[2]) == names[i][2]) ||
		    (n == 4 && i == 8 && seed_word_eq(s, 4, "sept"))) {
			s += n;
			if (s < e && *s == '.')
				s++;
			*p = s;
			return (int)i + 1;
		}
	}
	return 0;
}

/* Skip an ordinal suffix ("1st", "2nd", "3rd", "4th"). */
static void ordinal(const char **p, const char *e)
{
	if (e - *p >= 2 &&
	    (seed_word_eq(*p, 2, "st") || seed_word_eq(*p, 2, "nd") ||
	     seed_word_eq(*p, 2, "rd") || seed_word_eq(*p, 2, "th")) &&
	    (e - *p == 2 || !seed_alnum((unsigned char)(*p)[2])))
		*p += 2;
}

static void skip_sep(const char **p, const char *e)
{
	while (*p < e && (**p == ' ' || **p == '\t' || **p == ','))
		(*p)++;
}

int seed_parse_date(const char *s, size_t n, struct seed_date *d)
{
	const char *e = s + n, *p;
	int a, b, c, m;

	memset(d, 0, sizeof(*d));
	while (s < e && (seed_space((unsigned char)*s) || *s == '*' ||
			 *s == '_' || *s == '`' || *s == '"' || *s == '\''))
		s++;
	p = s;
	if (p < e && *p >= '0' && *p <= '9') {
		a = num(&p, e, 4);
		if (a < 0)
			return -1;
		if (p - s == 4 && p < e &&
		    (*p == '-' || *p == '/' || *p == '.')) {
			/* YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD */
			char sep = *p++;

			b = num(&p, e, 2);
			if (b < 0 || p >= e || *p != sep)
				return -1;
			p++;
			c = num(&p, e, 2);
			if (c < 0 || !valid(a, b, c))
				return -1;
			put_iso(d, a, b, c);
			return 0;
		}
		if (p - s == 4 && e - p >= 3 && (unsigned char)*p == 0xE5) {
			/* 2021年12月1日 */
			if (memcmp(p, "年", 3) != 0)
				return -1;
			p += 3;
			b = num(&p, e, 2);
			if (b < 0 || e - p < 3 || memcmp(p, "月", 3) != 0)
				return -1;
			p += 3;
			c = num(&p, e, 2);
			if (c < 0 || !valid(a, b, c))
				return -1;
			put_iso(d, a, b, c);
			return 0;
		}
		if (p - s <= 2 && p < e &&
		    (*p == '/' || *p == '.' || *p == '-')) {
			/* a/b/YYYY, DD.MM.YYYY, a-b-YYYY */
			char sep = *p++;

			b = num(&p, e, 2);
			if (b < 0 || p >= e || *p != sep)
				return -1;
			p++;
			{
				const char *ys = p;

				c = num(&p, e, 4);
				if (c < 0 || (p - ys != 4 && p - ys != 2))
					return -1;
				if (p - ys == 2) /* "10/04/18" */
					c += c < 70 ? 2000 : 1900;
			}
			d->a = a;
			d->b = b;
			d->y = c;
			if (sep == '.') { /* the dotted form is day first */
				if (!valid(c, b, a))
					return -1;
				put_iso(d, c, b, a);
				return 0;
			}
			if (valid(c, b, a) && valid(c, a, b) && a != b) {
				d->ambiguous = 1;
				put_iso(d, c, b, a); /* day first until told */
				return 0;
			}
			if (valid(c, b, a)) {
				d->dayfirst = a > 12 ? 1 : 0;
				put_iso(d, c, b, a);
				return 0;
			}
			if (valid(c, a, b)) {
				d->dayfirst = -1;
				put_iso(d, c, a, b);
				return 0;
			}
			return -1;
		}
		/* "1 December 2021", "1st Dec. 2021" */
		if (p - s > 2)
			return -1;
		ordinal(&p, e);
		skip_sep(&p, e);
		if (e - p >= 3 && seed_word_eq(p, 2, "of") && p[2] == ' ')
			p += 3; /* "15th of March 2021" */
		m = month_name(&p, e);
		if (!m)
			return -1;
		skip_sep(&p, e);
		{
			const char *ys = p;

			c = num(&p, e, 4);
			if (c < 0 || p - ys != 4 || !valid(c, m, a))
				return -1;
		}
		put_iso(d, c, m, a);
		return 0;
	}
	/* "December 1, 2021", "Dec 1st 2021" */
	m = month_name(&p, e);
	if (!m)
		return -1;
	skip_sep(&p, e);
	a = num(&p, e, 2);
	if (a < 0)
		return -1;
	ordinal(&p, e);
	skip_sep(&p, e);
	{
		const char *ys = p;

		c = num(&p, e, 4);
		if (c < 0 || p - ys != 4 || !valid(c, m, a))
			return -1;
	}
	put_iso(d, c, m, a);
	return 0;
}

void seed_date_order(struct seed_date *d, int dayfirst)
{
	if (!d->ambiguous)
		return;
	if (dayfirst)
		put_iso(d, d->y, d->b, d->a);
	else
		put_iso(d, d->y, d->a, d->b);
}
