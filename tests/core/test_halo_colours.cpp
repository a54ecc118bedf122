// phew_colour_haloes: the ten most massive haloes get colours 0..9 in mass order, the others
// share 8 colours so that neighbours differ (checked on lattices where that is always possible,
// across periodic edges too), bad input refused with a message and nothing written.
#include "phew_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Coloured {
  phew_status status = PHEW_OK;
  std::vector<int32_t> colour;
  std::string message;
};

Coloured colour_of(const std::vector<double> &mass, const std::vector<double> &centre, const double *period)
{
  Coloured c;
  c.colour.assign(std::max<size_t>(mass.size(), 1), -7); // -7: never written
  phew_context context;
  phew_context_init(&context);
  c.status = phew_colour_haloes(&context, (int64_t)mass.size(), mass.data(), centre.data(), period, c.colour.data());
  c.message = context.message;
  c.colour.resize(mass.size());
  return c;
}

// n^3 haloes on a lattice of spacing 1 (centres at i + 0.5), random masses.
void lattice(int n, unsigned seed, std::vector<double> &mass, std::vector<double> &centre)
{
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(1.0, 1000.0);
  mass.clear();
  centre.clear();
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        mass.push_back(uniform(random));
        centre.insert(centre.end(), {x + 0.5, y + 0.5, z + 0.5});
      }
}

TEST(HaloColours, TheTenMostMassiveGetTheirOwnColoursInMassOrder)
{
  std::vector<double> mass, centre;
  lattice(6, 3, mass, centre);
  mass[17] = mass[40] = 5000.0; // a tie at the top: the lower index first
  const Coloured c = colour_of(mass, centre, nullptr);
  ASSERT_EQ(c.status, PHEW_OK) << c.message;
  std::vector<int64_t> order(mass.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = (int64_t)i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return mass[a] > mass[b]; });
  EXPECT_EQ(order[0], 17);
  for (size_t rank = 0; rank < order.size(); ++rank) {
    if (rank < PHEW_COLOURS_OWN)
      EXPECT_EQ(c.colour[order[rank]], (int32_t)rank) << "rank " << rank;
    else
      EXPECT_TRUE(c.colour[order[rank]] >= PHEW_COLOURS_OWN && c.colour[order[rank]] < PHEW_COLOURS)
          << "rank " << rank << " colour " << c.colour[order[rank]];
  }
}

// Each lattice point has 6 nearest neighbours at distance 1 and 8 shared colours: a halo can
// always take a colour that none of its already coloured nearest neighbours has.
TEST(HaloColours, NearestNeighboursDifferOnALattice)
{
  for (bool periodic : {false, true}) {
    std::vector<double> mass, centre;
    const int n = 12;
    lattice(n, periodic ? 11 : 12, mass, centre);
    const double period[3] = {double(n), double(n), double(n)};
    const Coloured c = colour_of(mass, centre, periodic ? period : nullptr);
    ASSERT_EQ(c.status, PHEW_OK) << c.message;
    int pairs = 0, across = 0;
    for (int z = 0; z < n; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          for (int axis = 0; axis < 3; ++axis) {
            int at[3] = {x, y, z};
            if (at[axis] == n - 1 && !periodic)
              continue;
            const bool wraps = at[axis] == n - 1;
            at[axis] = (at[axis] + 1) % n;
            const int i = x + n * (y + n * z), j = at[0] + n * (at[1] + n * at[2]);
            EXPECT_NE(c.colour[i], c.colour[j])
                << "haloes " << i << " and " << j << (wraps ? " (across the edge)" : "");
            ++pairs;
            across += wraps;
          }
    EXPECT_EQ(pairs, periodic ? 3 * n * n * n : 3 * n * n * (n - 1));
    EXPECT_EQ(across, periodic ? 3 * n * n : 0);
    // every shared colour is used, and about evenly
    std::vector<int> used(PHEW_COLOURS, 0);
    for (int32_t k : c.colour)
      ++used[k];
    for (int k = PHEW_COLOURS_OWN; k < PHEW_COLOURS; ++k)
      EXPECT_GT(used[k], n * n * n / 20) << "colour " << k;
  }
}

// Without the period the lattice's opposite faces are far apart: what makes the periodic case
// pass is the wrap, not luck. With haloes only on the two faces x = 0.5 and x = n - 0.5 in a
// periodic box, each face pair (i, j) is 1 apart across the edge and must differ.
TEST(HaloColours, PeriodicEdgesAreNeighbours)
{
  const int n = 16;
  std::vector<double> mass, centre;
  for (int y = 0; y < n; ++y)
    for (int z = 0; z < n; ++z)
      for (double x : {0.5, n - 0.5}) {
        mass.push_back((x > 1 ? 100.0 : 1000.0) + y + n * z); // one face, then the other
        centre.insert(centre.end(), {x, y + 0.5, z + 0.5});
      }
  const double period[3] = {double(n), double(n), double(n)};
  const Coloured c = colour_of(mass, centre, period);
  ASSERT_EQ(c.status, PHEW_OK) << c.message;
  for (size_t i = 0; i < mass.size(); i += 2)
    EXPECT_NE(c.colour[i], c.colour[i + 1]) << "pair " << i / 2;
}

TEST(HaloColours, NonFiniteValuesAndDegenerateSets)
{
  // a NaN mass is the lightest; a NaN centre is far from all; all in one plane; one halo
  std::vector<double> mass = {1.0, NAN, 3.0, 2.0}, centre = {0, 0, 0, 1, 1, 0, NAN, 0, 0, 2, 2, 0};
  Coloured c = colour_of(mass, centre, nullptr);
  ASSERT_EQ(c.status, PHEW_OK) << c.message;
  EXPECT_EQ(c.colour, (std::vector<int32_t>{2, 3, 0, 1}));
  std::vector<double> many(30, 1.0), spots(90, 0.0); // 30 haloes at one point, equal masses
  c = colour_of(many, spots, nullptr);
  ASSERT_EQ(c.status, PHEW_OK) << c.message;
  for (int i = 0; i < 30; ++i)
    EXPECT_EQ(c.colour[i] < PHEW_COLOURS_OWN, i < PHEW_COLOURS_OWN) << i;
  c = colour_of({}, {}, nullptr);
  EXPECT_EQ(c.status, PHEW_OK);
}

TEST(HaloColours, BadInputIsRefusedAndNothingWritten)
{
  std::vector<double> mass = {1.0, 2.0}, centre = {0, 0, 0, 1, 1, 1};
  const double negative[3] = {1.0, -1.0, 1.0}, infinite[3] = {INFINITY, 0.0, 0.0};
  for (const double *period : {negative, infinite}) {
    const Coloured c = colour_of(mass, centre, period);
    EXPECT_EQ(c.status, PHEW_ERROR_ARGUMENT);
    EXPECT_NE(c.message.find("period"), std::string::npos) << c.message;
    EXPECT_EQ(c.colour, (std::vector<int32_t>{-7, -7}));
  }
  int32_t colour[2] = {-7, -7};
  phew_context context;
  phew_context_init(&context);
  EXPECT_EQ(phew_colour_haloes(&context, -1, mass.data(), centre.data(), nullptr, colour), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("negative"), std::string::npos) << context.message;
  EXPECT_EQ(phew_colour_haloes(&context, 2, mass.data(), nullptr, nullptr, colour), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(phew_colour_haloes(nullptr, 2, nullptr, centre.data(), nullptr, colour), PHEW_ERROR_ARGUMENT);
  EXPECT_EQ(colour[0], -7);
  EXPECT_EQ(colour[1], -7);
}

TEST(HaloColours, PaletteAndTheGreyOfNothing)
{
  double rgb[3], grey[3];
  phew_colour_rgb(-1, grey);
  EXPECT_EQ(grey[0], 0.75);
  EXPECT_EQ(grey[1], 0.75);
  EXPECT_EQ(grey[2], 0.75);
  phew_colour_rgb(PHEW_COLOURS, rgb);
  EXPECT_EQ(std::memcmp(rgb, grey, sizeof rgb), 0);
  // every colour distinct from the others and from the grey (by at least 0.1 in some channel)
  for (int a = 0; a < PHEW_COLOURS; ++a) {
    double ca[3], cb[3];
    phew_colour_rgb(a, ca);
    for (int b = -1; b < a; ++b) {
      phew_colour_rgb(b, cb);
      double most = 0.0;
      for (int k = 0; k < 3; ++k)
        most = std::max(most, std::fabs(ca[k] - cb[k]));
      EXPECT_GT(most, 0.1) << "colours " << a << " and " << b;
    }
  }
}

} // namespace
