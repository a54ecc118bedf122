// The merger tree drawn (phew_layout_merger_tree): a worked history of three steps with a merger,
// a split, a structure that vanishes and one that appears, every node's column, final halo and
// main branch checked by hand; the rows of phew_link_steps on a random history, where the
// tree's own edges must not cross; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "phew/phew.h"

namespace {

phew_link Row(int64_t progenitor, int64_t descendant, double mass, int main_progenitor, int main_descendant)
{
  phew_link l{};
  l.progenitor_id = progenitor;
  l.descendant_id = descendant;
  l.descendant_mass = mass;
  l.main_progenitor = main_progenitor;
  l.main_descendant = main_descendant;
  l.progenitor_step = -1;
  l.kind = PHEW_LINK_DIRECT;
  l.host_id = -1;
  return l;
}

struct Drawing {
  phew_context context;
  phew_tree_drawing drawing{};
  phew_status status;
  Drawing(const std::vector<phew_link> &rows, const std::vector<int64_t> &steps)
  {
    phew_context_init(&context);
    status = phew_layout_merger_tree(&context, rows.data(), steps.data(), static_cast<int64_t>(rows.size()), &drawing);
  }
  ~Drawing() { phew_tree_drawing_free(&drawing); }
  const phew_tree_node &node(int64_t step, int64_t id) const
  {
    for (int64_t v = 0; v < drawing.n_nodes; ++v)
      if (drawing.nodes[v].step == step && drawing.nodes[v].id == id)
        return drawing.nodes[v];
    ADD_FAILURE() << "no node " << id << " at step " << step;
    return drawing.nodes[0];
  }
};

// Step 0: structures 0 (mass 10), 1 (4), 2 (3), 3 (1).
// Step 1: 0 <- 0 (main), 1 (merger: 1's main descendant is 0); 1 <- 2; 3 vanishes; 2 new.
// Step 2: 0 <- 0; 1 <- 1 (1 splits: its main descendant 1, and a part goes to 2, whose main
//         progenitor it is); 2's mass 2.
TEST(TreeLayout, WorkedHistory)
{
  const std::vector<phew_link> rows = {
      Row(-1, 0, 10, 0, 0), Row(-1, 1, 4, 0, 0), Row(-1, 2, 3, 0, 0), Row(-1, 3, 1, 0, 0), // step 0
      Row(0, 0, 14, 1, 1),  Row(1, 0, 14, 0, 1), Row(2, 1, 3, 1, 1),  Row(-1, 2, 0.5, 0, 0),
      Row(3, -1, 0, 0, 0),                                                                // step 1
      Row(0, 0, 15, 1, 1),  Row(1, 1, 2, 1, 1),  Row(1, 2, 1, 1, 0),  Row(2, 2, 1, 0, 1), // step 2
  };
  const std::vector<int64_t> steps = {0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2};
  Drawing d(rows, steps);
  ASSERT_EQ(d.status, PHEW_OK) << d.context.message;
  EXPECT_EQ(d.drawing.n_nodes, 4 + 3 + 3);
  EXPECT_EQ(d.drawing.n_edges, 7); // every row with a progenitor and a descendant
  EXPECT_EQ(d.drawing.last_step, 2);
  // final haloes by following main descendants
  EXPECT_EQ(d.node(0, 0).final_id, 0);
  EXPECT_EQ(d.node(0, 1).final_id, 0); // merged into 0
  EXPECT_EQ(d.node(0, 2).final_id, 1);
  EXPECT_EQ(d.node(0, 3).final_id, -1); // vanished
  EXPECT_EQ(d.node(1, 2).final_id, 2);
  EXPECT_EQ(d.node(2, 2).final_id, 2);
  EXPECT_EQ(d.node(1, 0).n_progenitors, 2);
  // main progenitor by the flag: 2 at step 2 comes mainly from 1 (a split of it)...
  EXPECT_EQ(d.drawing.nodes[d.node(2, 2).main_progenitor].id, 1);
  // ...but its tree keeps 2 of step 1, whose main descendant it is
  // columns: the last step's trees by mass (0: 15, 1: 2, 2: 1), one column apart;
  // tree of 0: 0's chain in column 0, the merged 1 beside it (column 1); tree of 1: column 3;
  // tree of 2: column 5; then 3 of step 0, a tree of its own (no final halo): column 7
  EXPECT_EQ(d.node(2, 0).x, 0.0);
  EXPECT_EQ(d.node(1, 0).x, 0.0);
  EXPECT_EQ(d.node(0, 0).x, 0.0);
  EXPECT_EQ(d.node(0, 1).x, 1.0);
  EXPECT_EQ(d.node(2, 1).x, 3.0);
  EXPECT_EQ(d.node(1, 1).x, 3.0);
  EXPECT_EQ(d.node(0, 2).x, 3.0);
  EXPECT_EQ(d.node(2, 2).x, 5.0);
  EXPECT_EQ(d.node(1, 2).x, 5.0);
  EXPECT_EQ(d.node(0, 3).x, 7.0);
  EXPECT_EQ(d.drawing.n_columns, 8);
  EXPECT_EQ(d.node(0, 0).main_branch, 1);
  EXPECT_EQ(d.node(0, 1).main_branch, 0);
  EXPECT_EQ(d.node(0, 3).main_branch, 1);
}

// Random histories of phew_link_steps: the tree edges (main descendant links) of one final
// halo never cross, and every node's final halo is where its main descendants lead.
TEST(TreeLayout, RandomHistoriesDoNotCross)
{
  std::mt19937_64 random(31);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 300, n_steps = 6;
    std::vector<int64_t> ids(n);
    for (int i = 0; i < n; ++i)
      ids[i] = i;
    std::vector<phew_link> rows;
    std::vector<int64_t> steps;
    std::vector<int64_t> previous(n, -1);
    std::vector<int64_t> label(n);
    phew_context context;
    phew_context_init(&context);
    const int structures[n_steps] = {20, 16, 12, 9, 6, 4};
    for (int s = 0; s < n_steps; ++s) {
      for (int i = 0; i < n; ++i)
        label[i] = (random() % 5 == 0) ? -1 : static_cast<int64_t>((i * structures[s]) / n + random() % 2);
      phew_step_labels a{}, b{};
      a.n = b.n = n;
      a.id = b.id = ids.data();
      a.label = previous.data();
      b.label = label.data();
      phew_link_result result{};
      ASSERT_EQ(phew_link_steps(&context, &a, &b, &result), PHEW_OK) << context.message;
      for (int64_t k = 0; k < result.n_links; ++k) {
        rows.push_back(result.links[k]);
        steps.push_back(s);
      }
      phew_link_result_free(&result);
      previous = label;
    }
    Drawing d(rows, steps);
    ASSERT_EQ(d.status, PHEW_OK) << d.context.message;
    const phew_tree_drawing &t = d.drawing;
    for (int64_t v = 0; v < t.n_nodes; ++v) {
      int64_t end = v;
      while (t.nodes[end].descendant >= 0)
        end = t.nodes[end].descendant;
      EXPECT_EQ(t.nodes[v].final_id, t.nodes[end].step == n_steps - 1 ? t.nodes[end].id : -1);
    }
    // two tree edges between the same pair of steps cross if their ends swap order
    for (int64_t a = 0; a < t.n_nodes; ++a)
      for (int64_t b = 0; b < t.n_nodes; ++b) {
        const int64_t da = t.nodes[a].descendant, db = t.nodes[b].descendant;
        if (a == b || da < 0 || db < 0 || t.nodes[a].step != t.nodes[b].step)
          continue;
        const double lo = t.nodes[a].x - t.nodes[b].x, hi = t.nodes[da].x - t.nodes[db].x;
        EXPECT_FALSE(lo * hi < 0) << "tree edges cross at step " << t.nodes[a].step;
      }
    // the nodes of one step have columns of their own
    for (int64_t a = 0; a < t.n_nodes; ++a) {
      for (int64_t b = a + 1; b < t.n_nodes; ++b) {
        if (t.nodes[a].step == t.nodes[b].step) {
          EXPECT_NE(t.nodes[a].x, t.nodes[b].x);
        }
      }
    }
  }
}

TEST(TreeLayout, BadInput)
{
  phew_context context;
  phew_context_init(&context);
  phew_tree_drawing drawing{};
  EXPECT_EQ(phew_layout_merger_tree(&context, nullptr, nullptr, -1, &drawing), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("negative"), std::string::npos);
  EXPECT_EQ(phew_layout_merger_tree(&context, nullptr, nullptr, 0, nullptr), PHEW_ERROR_ARGUMENT);
  // a progenitor that is no structure of the step before
  std::vector<phew_link> rows = {Row(-1, 0, 1, 0, 0), Row(5, 0, 1, 1, 1)};
  std::vector<int64_t> steps = {0, 1};
  EXPECT_EQ(phew_layout_merger_tree(&context, rows.data(), steps.data(), 2, &drawing), PHEW_ERROR_ARGUMENT);
  EXPECT_NE(std::string(context.message).find("structure 5 of step 0"), std::string::npos) << context.message;
  EXPECT_EQ(drawing.n_nodes, 0);
  rows[1] = Row(0, 0, NAN, 1, 1);
  EXPECT_EQ(phew_layout_merger_tree(&context, rows.data(), steps.data(), 2, &drawing), PHEW_ERROR_DATA);
  steps = {0, 0};
  rows[1] = Row(0, 1, 1, 1, 1);
  EXPECT_EQ(phew_layout_merger_tree(&context, rows.data(), steps.data(), 2, &drawing), PHEW_ERROR_ARGUMENT);
  // no rows: an empty drawing
  EXPECT_EQ(phew_layout_merger_tree(&context, nullptr, nullptr, 0, &drawing), PHEW_OK);
  EXPECT_EQ(drawing.n_nodes, 0);
  EXPECT_EQ(drawing.last_step, -1);
  phew_tree_drawing_free(&drawing);
}

} // namespace
