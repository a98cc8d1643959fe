/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "module" fixture of tests that unload numab_minwait: it must be
 * loaded to start with, and is loaded again whatever the test did.
 * Include after kselftest_harness.h and numab_test_util.h.
 */
#ifndef NUMAB_MODULE_FIXTURE_H
#define NUMAB_MODULE_FIXTURE_H

FIXTURE(module) {
	int unused;
};

FIXTURE_SETUP(module)
{
	ASSERT_MODULE();
}

FIXTURE_TEARDOWN(module)
{
	if (!numab_module_loaded())
		numab_modprobe();
}

#endif /* NUMAB_MODULE_FIXTURE_H */
