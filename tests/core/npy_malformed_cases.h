#pragma once
// Hand-built damaged .npy files, each with the words its error message must contain.
#include <string>
#include <vector>

namespace parity::test {

struct MalformedNpy {
  std::string name;    // file stem
  std::string bytes;   // the whole file
  std::string reason;  // expected in the error message
};

// A version 1.0 file image: magic, version, little-endian length, `dict` padded to 64 bytes.
inline std::string npy_v1(const std::string& dict) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header;
}

inline std::string dict_for(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

inline std::vector<MalformedNpy> malformed_npy_cases() {
  const std::string f4_2x3 = dict_for("<f4", "(2, 3)");
  std::vector<MalformedNpy> cases = {
      {"empty", "", "empty file"},
      {"bad_magic", "\x93NUMPZ\x01\x00" + std::string(100, ' '), "bad magic"},
      {"text_file", "hello, this is not numpy\n", "bad magic"},
      {"magic_only", std::string("\x93NUMPY", 6), "truncated header"},
      {"no_length", std::string("\x93NUMPY\x01\x00\x10", 9), "truncated header"},
      {"short_header", npy_v1(f4_2x3).substr(0, 40), "truncated header"},
      {"version_4", std::string("\x93NUMPY\x04\x00", 8) + npy_v1(f4_2x3).substr(8), "unsupported .npy version 4.0"},
      {"fortran", npy_v1(dict_for("<f4", "(2, 3)", "True")) + std::string(24, '\0'), "fortran_order True"},
      {"big_endian", npy_v1(dict_for(">f4", "(2, 3)")) + std::string(24, '\0'), "big-endian dtype '>f4'"},
      {"complex", npy_v1(dict_for("<c8", "(2,)")) + std::string(16, '\0'), "unsupported dtype '<c8'"},
      {"int8", npy_v1(dict_for("|i1", "(2,)")) + std::string(2, '\0'), "unsupported dtype '|i1'"},
      {"object", npy_v1(dict_for("|O", "(2,)")) + std::string(16, '\0'), "unsupported dtype '|O'"},
      {"structured", npy_v1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }") + std::string(4, '\0'),
       "structured dtypes"},
      {"truncated_data", npy_v1(f4_2x3) + std::string(20, '\0'), "truncated data"},
      {"trailing_data", npy_v1(f4_2x3) + std::string(28, '\0'), "data size does not match the shape"},
      {"negative_dim", npy_v1(dict_for("<f4", "(2, -3)")), "negative dimension -3"},
      {"dim_overflow", npy_v1(dict_for("<f4", "(99999999999999999999,)")), "overflows int64"},
      {"count_overflow", npy_v1(dict_for("<f4", "(4294967296, 4294967296)")), "overflows int64"},
      {"bytes_overflow", npy_v1(dict_for("<f8", "(4611686018427387904,)")), "overflows int64"},
      {"bool_byte_2", npy_v1(dict_for("|b1", "(3,)")) + std::string("\x01\x02\x00", 3), "must be 0 or 1"},
      {"no_colon", npy_v1("{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3), }"), "malformed header dict"},
      {"missing_shape", npy_v1("{'descr': '<f4', 'fortran_order': False, }"), "lacks 'shape'"},
      {"duplicate_key", npy_v1("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"),
       "duplicate key 'descr'"},
      {"unknown_key", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }"),
       "unexpected key 'extra'"},
      {"unterminated", npy_v1("{'descr: '<f4', 'fortran_order': False, 'shape': (1,), }"), "malformed header dict"},
      {"int_not_tuple", npy_v1(dict_for("<f4", "(3)")), "not a tuple"},
      {"bad_bool", npy_v1(dict_for("<f4", "(1,)", "Maybe")), "expected True or False"},
      {"after_brace", npy_v1(dict_for("<f4", "(1,)") + " junk"), "unexpected text after"},
      {"not_a_dict", npy_v1("['descr', '<f4']"), "expected '{'"},
  };
  // A version 2.0 header declaring 70,000 bytes, all of them present.
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  const uint32_t len = 70000;
  for (int i = 0; i < 4; ++i) v2 += char((len >> (8 * i)) & 0xff);
  v2 += dict_for("<f4", "(1,)");
  v2 += std::string(len - dict_for("<f4", "(1,)").size() - 1, ' ') + "\n" + std::string(4, '\0');
  cases.push_back({"huge_header", v2, "exceeds the 64 KiB limit"});
  return cases;
}

}  // namespace parity::test
