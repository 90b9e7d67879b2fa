// Fuzzes the nccl-tests log reader of `trainsim calibrate --nccl-tests`: text in, the runs it
// holds or an input error out.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "validate/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  auto log = trainsim::validate::parseNcclTestsLog(trainsim::fuzz::inputText(data, size), "fuzz.log");
  (void)log;
  return 0;
}
