/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libFuzzer's entry point, which each target defines: declared here so
 * -Wmissing-prototypes finds the definition's prototype. */
#ifndef KMON_FUZZ_H
#define KMON_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
