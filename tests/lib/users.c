/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "users.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

void gb_become(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	if (!pw || initgroups(pw->pw_name, pw->pw_gid) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(90);
}
