// Fuzzes the nccl-tests log reader of `trainsim calibrate --nccl-tests`: text in, the runs it
// holds or an input error out.
#include <cstddef>
#include <cstdint>

#include "calibrate/nccl_tests_log.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  auto log = trainsim::calibrate::parseNcclTestsLog(trainsim::fuzz::inputText(data, size), "fuzz.log");
  (void)log;
  return 0;
}
