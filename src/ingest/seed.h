/*
 * seed.h -- seeding file-backed records from Markdown (SPEC 4.1).
 *
 * Layer: seed sits on store (and md4c, libyaml, git); the CLI sits on it.
 * Its public calls (cairn_seed, cairn_seed_report_release,
 * cairn_seed_map_status) and their types are declared in include/cairn.h;
 * this header is what the library's own modules include for them.
 *
 * docs/SEED.md is the user-facing description: the folders, the front
 * matter, the ADR status mapping, the facts-file form, the chunking rules
 * and how ids are derived.
 */
#ifndef CAIRN_SEED_H
#define CAIRN_SEED_H

#include "cairn.h"

#endif /* CAIRN_SEED_H */
