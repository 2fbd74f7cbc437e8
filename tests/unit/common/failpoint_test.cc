// The failpoint facility (common/failpoint.h): counted, permanent and disarmed points, and the
// specification errors that must stop a test run instead of letting it pass without the failure.
#include "lakesync/common/failpoint.h"

#include <gtest/gtest.h>

namespace lakesync {
namespace {

struct Disarm {
  ~Disarm() { (void)SetFailpoints(""); }
};

TEST(FailpointTest, UnarmedPointsNeverFire) {
  Disarm disarm;
  ASSERT_TRUE(SetFailpoints("").ok());
  EXPECT_FALSE(FailpointFires("commit.conflict"));
}

TEST(FailpointTest, ACountFiresThatManyTimesThenStops) {
  Disarm disarm;
  ASSERT_TRUE(SetFailpoints("commit.conflict=2,other=1").ok());
  EXPECT_TRUE(FailpointFires("commit.conflict"));
  EXPECT_TRUE(FailpointFires("commit.conflict"));
  EXPECT_FALSE(FailpointFires("commit.conflict"));
  EXPECT_FALSE(FailpointFires("not.armed"));
  EXPECT_TRUE(FailpointFires("other"));
  EXPECT_FALSE(FailpointFires("other"));
}

TEST(FailpointTest, AlwaysFiresEveryTime) {
  Disarm disarm;
  ASSERT_TRUE(SetFailpoints("commit.conflict=always").ok());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(FailpointFires("commit.conflict"));
}

TEST(FailpointTest, BadSpecificationsAreErrors) {
  Disarm disarm;
  for (const char* spec : {"commit.conflict", "=2", "commit.conflict=", "commit.conflict=0",
                           "commit.conflict=twice", "commit.conflict=-1", "commit.pause=wait:"}) {
    SCOPED_TRACE(spec);
    const Status st = SetFailpoints(spec);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
  }
}

}  // namespace
}  // namespace lakesync
