// UNO Arena sample bot in C++17: a gRPC client of RefereeService.Play.
//
// The referee starts this program with ARENA_ADDRESS (e.g. "unix:/tmp/arena-match-x/referee.sock")
// and ARENA_TOKEN in the environment. We say hello, then answer every decision request with
// the index of one of its legal actions, until match_end. The stubs (referee.pb.h,
// referee.grpc.pb.h) are generated from referee.proto by the CMake build.
//
// Strategy (the arena's "strategist" heuristics):
//   * shed high points first; Skip / Draw Two first when the next seat has <= 2 cards;
//   * hold wilds until nothing else plays; never bluff a Wild Draw Four;
//   * name the colour held most;
//   * challenge a Wild Draw Four only when its player holds a big hand (>= 6 cards).
// Under the house rules it declares (kVariants, as in bot.toml; docs/rules.md §21-§32):
//   * pass a pending penalty on when it can (a Reverse first, then a Draw Two, then a black
//     card), else challenge or accept as above;
//   * jump in whenever asked; swap hands with the seat holding the fewest cards; pass on
//     exchanges, and when it must give a card, give its costliest coloured one;
//   * play a +10 before a Wild.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "referee.grpc.pb.h"

namespace v1 = uno_arena::v1;

namespace {

constexpr const char* kBotName = "cpp-strategist";
constexpr const char* kBotVersion = "1.0";
constexpr uint32_t kChallengeHandSize = 6;
// The house rules this bot handles, declared in hello (the same list as bot.toml).
constexpr v1::Variant kVariants[] = {
    v1::VARIANT_STACKING,       v1::VARIANT_STACK_TWO_ON_FOUR, v1::VARIANT_REVERSE_DEFLECTS,
    v1::VARIANT_SEVEN_O,        v1::VARIANT_EXCHANGE_ON_FIVE,  v1::VARIANT_JUMP_IN,
    v1::VARIANT_ZERO_SCORES_50, v1::VARIANT_COLOUR_CIRCLE,     v1::VARIANT_DRAW_TEN,
    v1::VARIANT_UNTIL_THE_LAST, v1::VARIANT_UNO_IN_SEVEN,      v1::VARIANT_LAZY_SCORING,
    v1::VARIANT_MISTAKE_PENALTY,
};

using Hand = google::protobuf::RepeatedPtrField<v1::Card>;

int Points(const v1::Card& card) {
  switch (card.kind()) {
    case v1::CARD_KIND_NUMBER:
      return static_cast<int>(card.number());
    case v1::CARD_KIND_SKIP:
    case v1::CARD_KIND_REVERSE:
    case v1::CARD_KIND_DRAW_TWO:
      return 20;
    default:
      return 50;  // wilds and +10
  }
}

// A black card: Wild, Wild Draw Four or +10 (no colour of its own).
bool IsWild(const v1::Card& card) {
  return card.kind() == v1::CARD_KIND_WILD || card.kind() == v1::CARD_KIND_WILD_DRAW_FOUR ||
         card.kind() == v1::CARD_KIND_DRAW_TEN;
}

// Colours are 1..4 on the wire (red, yellow, green, blue); index 0..3 here.
int ColourIndex(v1::Colour colour) {
  int c = static_cast<int>(colour) - 1;
  return c >= 0 && c < 4 ? c : -1;
}

std::array<int, 4> ColourCounts(const Hand& hand) {
  std::array<int, 4> counts{};
  for (const auto& card : hand) {
    int c = ColourIndex(card.colour());
    if (c >= 0 && !IsWild(card)) ++counts[c];
  }
  return counts;
}

// The colour held most; ties go to more points, then to the first colour.
v1::Colour MostHeldColour(const Hand& hand) {
  std::array<int, 4> counts{}, weight{};
  for (const auto& card : hand) {
    int c = ColourIndex(card.colour());
    if (c >= 0 && !IsWild(card)) {
      ++counts[c];
      weight[c] += Points(card);
    }
  }
  int best = 0;
  for (int c = 1; c < 4; ++c) {
    if (std::tie(counts[c], weight[c]) > std::tie(counts[best], weight[best])) best = c;
  }
  return static_cast<v1::Colour>(best + 1);
}

bool HoldsColour(const Hand& hand, v1::Colour colour) {
  for (const auto& card : hand) {
    if (!IsWild(card) && card.colour() == colour) return true;
  }
  return false;
}

int Step(v1::Direction direction) {
  return direction == v1::DIRECTION_COUNTER_CLOCKWISE ? -1 : 1;
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

class Strategist {
 public:
  explicit Strategist(uint64_t seed) : seed_(seed) {}

  // An index into request.legal_actions().
  int Decide(const v1::DecisionRequest& request) {
    // Each decision's tie-breaks come from the match seed and the request's id, not from
    // a generator running over the match: an answer depends on its request alone, so
    // `arena refeed` reproduces any decision, not only the first.
    rng_.seed(seed_ ^ (request.request_id() * 0x9E3779B97F4A7C15ULL));
    const auto& legal = request.legal_actions();
    const auto& obs = request.observation();
    auto find_kind = [&](v1::ActionKind kind) {
      for (int i = 0; i < legal.size(); ++i) {
        if (legal[i].kind() == kind) return i;
      }
      return -1;
    };
    auto or_first = [](int index) { return index >= 0 ? index : 0; };

    switch (request.kind()) {
      case v1::DECISION_KIND_CHOOSE_COLOUR: {
        v1::Colour colour = MostHeldColour(obs.hand());
        for (int i = 0; i < legal.size(); ++i) {
          if (legal[i].kind() == v1::ACTION_KIND_CHOOSE_COLOUR && legal[i].colour() == colour) {
            return i;
          }
        }
        return 0;
      }
      case v1::DECISION_KIND_CHALLENGE_OR_ACCEPT:
        return ChallengeOrAccept(request);
      case v1::DECISION_KIND_STACK_OR_ACCEPT: {
        // §21/§22: a card passes the penalty on; a Reverse costs least to lose, a black card
        // most.
        auto cost = [](const v1::Card& card) {
          return card.kind() == v1::CARD_KIND_REVERSE ? 0
                 : card.kind() == v1::CARD_KIND_DRAW_TWO ? 1 : 2;
        };
        int best = -1;
        for (int i = 0; i < legal.size(); ++i) {
          if (legal[i].kind() == v1::ACTION_KIND_PLAY &&
              (best < 0 || cost(legal[i].card()) < cost(legal[best].card()))) {
            best = i;
          }
        }
        return best >= 0 ? best : ChallengeOrAccept(request);
      }
      case v1::DECISION_KIND_JUMP_IN_OR_PASS:
        return or_first(find_kind(v1::ACTION_KIND_PLAY));  // §25: shed a card, take the turn
      case v1::DECISION_KIND_CHOOSE_SEAT: {
        int pass = find_kind(v1::ACTION_KIND_PASS);  // §24: a blind swap gains nothing
        if (pass >= 0) return pass;
        int best = 0;  // §23: swap with the seat holding the fewest cards
        for (int i = 1; i < legal.size(); ++i) {
          if (obs.hand_sizes(static_cast<int>(legal[i].seat())) <
              obs.hand_sizes(static_cast<int>(legal[best].seat()))) {
            best = i;
          }
        }
        return best;
      }
      case v1::DECISION_KIND_GIVE_CARD: {
        // §24: give the costliest coloured card (black cards are worth keeping).
        auto worth = [](const v1::Card& card) { return IsWild(card) ? -1 : Points(card); };
        int best = 0;
        for (int i = 1; i < legal.size(); ++i) {
          if (worth(legal[i].card()) > worth(legal[best].card())) best = i;
        }
        return best;
      }
      case v1::DECISION_KIND_PLAY_DRAWN_OR_KEEP: {
        int play = find_kind(v1::ACTION_KIND_PLAY);
        int keep = find_kind(v1::ACTION_KIND_KEEP);
        if (play < 0) return or_first(keep);
        if (legal[play].card().kind() == v1::CARD_KIND_WILD_DRAW_FOUR &&
            HoldsColour(obs.hand(), obs.colour()) && keep >= 0) {
          return keep;  // never bluff
        }
        return play;
      }
      default:
        return PlayOrDraw(request);
    }
  }

 private:
  // §13: challenge only when the Wild Draw Four's player holds a big hand; else accept.
  static int ChallengeOrAccept(const v1::DecisionRequest& request) {
    const auto& legal = request.legal_actions();
    const auto& obs = request.observation();
    int players = obs.hand_sizes_size();
    int offender = Mod(static_cast<int>(obs.seat()) - Step(obs.direction()), players);
    bool big = obs.hand_sizes(offender) >= kChallengeHandSize;
    int challenge = -1, accept = -1;
    for (int i = 0; i < legal.size(); ++i) {
      if (legal[i].kind() == v1::ACTION_KIND_CHALLENGE) challenge = i;
      if (legal[i].kind() == v1::ACTION_KIND_ACCEPT) accept = i;
    }
    if (big && challenge >= 0) return challenge;
    return accept >= 0 ? accept : 0;
  }

  int PlayOrDraw(const v1::DecisionRequest& request) {
    const auto& legal = request.legal_actions();
    const auto& obs = request.observation();
    std::array<int, 4> counts = ColourCounts(obs.hand());
    int players = obs.hand_sizes_size();
    int following = Mod(static_cast<int>(obs.seat()) + Step(obs.direction()), players);
    bool threatened = obs.hand_sizes(following) <= 2;

    std::vector<int> best;
    std::tuple<int, int, int> best_value{-1, -1, -1};
    int draw_four = -1, draw_ten = -1, wild = -1, draw = -1;
    for (int i = 0; i < legal.size(); ++i) {
      const v1::Action& action = legal[i];
      if (action.kind() == v1::ACTION_KIND_DRAW) draw = i;
      if (action.kind() != v1::ACTION_KIND_PLAY) continue;
      const v1::Card& card = action.card();
      if (card.kind() == v1::CARD_KIND_WILD_DRAW_FOUR) {
        if (draw_four < 0) draw_four = i;
        continue;
      }
      if (card.kind() == v1::CARD_KIND_WILD) {
        if (wild < 0) wild = i;
        continue;
      }
      if (card.kind() == v1::CARD_KIND_DRAW_TEN) {
        if (draw_ten < 0) draw_ten = i;
        continue;
      }
      bool attack = threatened && (card.kind() == v1::CARD_KIND_SKIP ||
                                   card.kind() == v1::CARD_KIND_DRAW_TWO);
      int c = ColourIndex(card.colour());
      std::tuple<int, int, int> value{attack ? 1 : 0, Points(card), c >= 0 ? counts[c] : 0};
      if (value > best_value) {
        best_value = value;
        best.assign(1, i);
      } else if (value == best_value) {
        best.push_back(i);
      }
    }
    if (!best.empty()) {
      // Exact ties are broken with the seeded generator: reproducible from match_start.seed
      // and the request.
      std::uniform_int_distribution<std::size_t> pick(0, best.size() - 1);
      return best[pick(rng_)];
    }
    if (draw_four >= 0 && !HoldsColour(obs.hand(), obs.colour())) return draw_four;
    if (draw_ten >= 0) return draw_ten;
    if (wild >= 0) return wild;
    return draw >= 0 ? draw : 0;
  }

  uint64_t seed_;
  std::mt19937_64 rng_;
};

}  // namespace

int main() {
  const char* address = std::getenv("ARENA_ADDRESS");
  const char* token = std::getenv("ARENA_TOKEN");
  if (address == nullptr || token == nullptr || !*address || !*token) {
    std::cerr << "ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)\n";
    return 2;
  }
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::RefereeService::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::PlayRequest, v1::PlayResponse>> stream(
      stub->Play(&context));

  v1::PlayRequest hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_bot_name(kBotName);
  hello.mutable_hello()->set_bot_version(kBotVersion);
  hello.mutable_hello()->set_protocol_version(v1::PROTOCOL_VERSION_1);
  for (v1::Variant variant : kVariants) hello.mutable_hello()->add_variants(variant);
  if (!stream->Write(hello)) {
    std::cerr << "could not send hello to " << address << "\n";
    return 1;
  }

  std::unique_ptr<Strategist> strategist = std::make_unique<Strategist>(0);
  bool finished = false;
  v1::PlayResponse response;
  while (!finished && stream->Read(&response)) {
    switch (response.message_case()) {
      case v1::PlayResponse::kMatchStart:
        strategist = std::make_unique<Strategist>(response.match_start().seed());
        std::cerr << "match " << response.match_start().match_id() << ": seat "
                  << response.match_start().seat() << "\n";
        break;
      case v1::PlayResponse::kDecisionRequest: {
        const v1::DecisionRequest& request = response.decision_request();
        v1::PlayRequest answer;
        answer.mutable_decision()->set_request_id(request.request_id());
        answer.mutable_decision()->set_action_index(
            static_cast<uint32_t>(strategist->Decide(request)));
        if (!stream->Write(answer)) {
          std::cerr << "the stream broke\n";
          return 1;
        }
        break;
      }
      case v1::PlayResponse::kMatchEnd:
        finished = true;
        std::cerr << "match end after " << response.match_end().rounds() << " rounds\n";
        break;
      default:  // events only
        break;
    }
  }
  stream->WritesDone();
  if (!finished) {
    grpc::Status status = stream->Finish();
    std::cerr << "the referee closed the stream before the match ended: "
              << status.error_message() << "\n";
    return 1;
  }
  // The referee closes the stream after match_end; no need to wait for its status.
  return 0;
}
