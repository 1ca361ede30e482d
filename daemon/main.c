/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>

int main(void)
{
	puts(PACKAGE_STRING);
	return 0;
}
