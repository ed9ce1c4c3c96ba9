#!/bin/sh
# Build against Debian's libns3-dev 3.37 (apt-get install -y libns3-dev).
set -e
cd "$(dirname "$0")"
g++ -O2 -std=c++17 -o hystart hystart.cc \
    -lns3-applications -lns3-internet -lns3-traffic-control -lns3-point-to-point -lns3-network -lns3-core
