#include "base/error.h"

namespace trainsim {

std::string Error::toString() const {
  std::string text;
  if (!where.empty()) text += where + ": ";
  if (!key_path.empty()) text += key_path + ": ";
  text += message;
  return text;
}

InputError::InputError(Error error) : std::runtime_error(error.toString()), error_(std::move(error)) {}

void throwInputError(std::string where, std::string key_path, std::string message) {
  throw InputError(Error{ExitCode::kInvalidInput, std::move(where), std::move(key_path), std::move(message)});
}

}  // namespace trainsim
