#pragma once
// Writes a run's output files all or nothing: each file goes to a hidden temporary name and
// is renamed into place only by commit(); without commit the temporaries are removed.
#include <fstream>
#include <string>
#include <vector>

namespace dfsim {

class OutputDir {
 public:
  // Creates the directory if needed; InputError (exit 2) if it cannot be written.
  explicit OutputDir(std::string dir);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  std::ofstream open(const std::string& name);  // a stream to the temporary of `name`
  void commit();
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  std::string temp_of(const std::string& name) const { return dir_ + "/." + name + ".tmp"; }
  std::string dir_;
  std::vector<std::string> names_;
  bool committed_ = false;
};

}  // namespace dfsim
