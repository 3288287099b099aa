#pragma once
// Kernels measured on a card (a CSV such as workloads/device-records/spyre-device-records.csv;
// its columns are explained in bench-ops.md beside it). Columns not needed are ignored.
#include <map>
#include <string>
#include <vector>

namespace dfsim {

// One row: every column by name, as text.
struct DeviceRecord {
  std::map<std::string, std::string> fields;
  int line = 0;  // in the file, for errors
  const std::string& at(const std::string& column) const;  // "" if the column is empty
  // KEY=value from the space-separated `params` column, else `dflt`.
  std::string param(const std::string& key, const std::string& dflt) const;
};

struct DeviceRecords {
  std::string file;
  std::vector<DeviceRecord> rows;
};

// Reads the CSV (RFC 4180 quoting). InputError naming the file, the line and the column for a
// missing column, a row of the wrong width, or a number that does not parse.
DeviceRecords load_device_records(const std::string& file);

// A column as a number, with an error naming file, line and column.
long long record_int(const DeviceRecords& f, const DeviceRecord& r, const std::string& column, long long dflt);
// A time column (measured_kernel_us, analytical_model_us): a number in [0.001, 1e12] microseconds,
// NaN if empty.
double record_number(const DeviceRecords& f, const DeviceRecord& r, const std::string& column);
// A KEY=value of the `params` column as an integer (`dflt` if absent), the error naming the
// file, the line and the key: a value such as WD_M=abc was an internal error.
long long record_param_int(const DeviceRecords& f, const DeviceRecord& r, const std::string& key, long long dflt);

}  // namespace dfsim
