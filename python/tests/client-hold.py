# SPDX-License-Identifier: LGPL-2.1-or-later
"""A client that requests LINE as an output at 1, says "held", and waits to be killed."""
import sys
import time

import gpiobroker

line = gpiobroker.request(sys.argv[1], output=True, value=True, label="py-hold")
print("held", line.path, flush=True)
while True:
    time.sleep(60)
