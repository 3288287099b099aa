#include "models/memory/memory.h"

#include <stdexcept>

namespace dfsim {

std::map<std::string, MemoryRegistry::Factory>& MemoryRegistry::table() {
  static std::map<std::string, Factory> t;
  return t;
}

bool MemoryRegistry::add(const std::string& name, Factory f) {
  table()[name] = std::move(f);
  return true;
}

IMemory* MemoryRegistry::create(const std::string& name, sc_core::sc_module_name inst) {
  auto it = table().find(name);
  if (it == table().end()) throw std::invalid_argument("no memory model named " + name);
  return it->second(inst);
}

std::vector<std::string> MemoryRegistry::names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : table()) out.push_back(k);
  return out;
}

}  // namespace dfsim
