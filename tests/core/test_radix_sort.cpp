// The particles' radix sort (core/src/base/radix_sort.c) against std::stable_sort on the
// same key bits: keys with many ties (so that stability shows), indices packed into the keys'
// low bits or in a payload array, keys in part of the word only, several block counts
// (threads) and sizes around the block size.
#include <gtest/gtest.h>

extern "C" {
#include "radix_sort.h"
}

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

std::vector<uint64_t> stable_reference(std::vector<uint64_t> a, int low, int high)
{
  const uint64_t mask = high - low >= 64 ? ~0ull : ((1ull << (high - low)) - 1) << low;
  std::stable_sort(a.begin(), a.end(), [mask](uint64_t x, uint64_t y) { return (x & mask) < (y & mask); });
  return a;
}

} // namespace

TEST(RadixSort, EqualsStableSortForAnyThreadCount)
{
  std::mt19937_64 random(17);
  for (int64_t n : {0, 1, 2, 1000, 65535, 65536, 65537, 300001}) {
    const int index_bits = radix_index_bits(n);
    for (int key_bits : {3, 11, 12, 30}) {
      std::vector<uint64_t> words((size_t)n);
      for (int64_t i = 0; i < n; ++i) // few distinct keys when key_bits is small: long runs of ties
        words[(size_t)i] = (random() & ((1ull << key_bits) - 1)) << index_bits | (uint64_t)i;
      const auto expected = stable_reference(words, index_bits, index_bits + key_bits);
      for (int threads : {1, 2, 3, 8}) {
        auto sorted = words;
        ASSERT_EQ(0, radix_sort(sorted.data(), nullptr, n, index_bits, index_bits + key_bits, threads));
        ASSERT_EQ(sorted, expected) << "n " << n << ", key bits " << key_bits << ", threads " << threads;
        // the same keys without the index, which comes along in the payload instead
        std::vector<uint64_t> keys((size_t)n);
        std::vector<int32_t> payload((size_t)n);
        for (int64_t i = 0; i < n; ++i) {
          keys[(size_t)i] = words[(size_t)i] >> index_bits;
          payload[(size_t)i] = (int32_t)i;
        }
        ASSERT_EQ(0, radix_sort(keys.data(), payload.data(), n, 0, key_bits, threads));
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(keys[(size_t)i], expected[(size_t)i] >> index_bits);
          ASSERT_EQ((uint64_t)payload[(size_t)i], expected[(size_t)i] & ((1ull << index_bits) - 1));
        }
      }
    }
  }
}

TEST(RadixSort, SortsOnlyTheGivenBits)
{
  // the low bits are noise outside the range: they keep their input order within equal keys
  std::mt19937_64 random(5);
  std::vector<uint64_t> words(200000);
  for (auto &w : words)
    w = random();
  const auto expected = stable_reference(words, 20, 64);
  auto sorted = words;
  ASSERT_EQ(0, radix_sort(sorted.data(), nullptr, (int64_t)sorted.size(), 20, 64, 2));
  EXPECT_EQ(sorted, expected);
  EXPECT_EQ(radix_index_bits(1), 1);
  EXPECT_EQ(radix_index_bits(2), 1);
  EXPECT_EQ(radix_index_bits(3), 2);
  EXPECT_EQ(radix_index_bits(1 << 20), 20);
  EXPECT_EQ(radix_index_bits((1 << 20) + 1), 21);
}
