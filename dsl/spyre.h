// The one include for kernel authors: Halide, the Spyre schedule directives, and compiling and
// running kernels on the simulated device.
#pragma once

#include "Halide.h"
#include "compile.h"
#include "cpu_reference.h"
#include "directives.h"
#include "fp8.h"
