// @BOT_NAME@: an UNO Arena bot in C++17, a gRPC client of RefereeService.Play.
//
// The referee starts it with ARENA_ADDRESS ("unix:/run/arena/referee.sock") and ARENA_TOKEN
// in its environment. It says hello, answers every decision request with the index of one
// of its legal actions, and exits at match end. The stubs (referee.pb.h, referee.grpc.pb.h)
// are generated from referee.proto by the CMake build.
//
// It plays the first playable card, names the colour it holds most, and challenges a Wild
// Draw Four only from a seat holding a big hand. Change Decide() to make it yours.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "referee.grpc.pb.h"

namespace v1 = uno_arena::v1;

namespace {

constexpr const char* kBotName = "@BOT_NAME@";
constexpr const char* kBotVersion = "0.1";
// Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
// almost surely held the colour in play, so the play was a bluff.
constexpr uint32_t kChallengeHandSize = 6;

int IndexOf(const v1::DecisionRequest& request, v1::ActionKind kind) {
  for (int i = 0; i < request.legal_actions_size(); ++i) {
    if (request.legal_actions(i).kind() == kind) return i;
  }
  return 0;
}

// The index of one of request.legal_actions().
int Decide(const v1::DecisionRequest& request) {
  const v1::Observation& observation = request.observation();
  switch (request.kind()) {
    case v1::DECISION_KIND_CHOOSE_COLOUR: {
      int best = 0;
      int best_count = -1;
      for (int i = 0; i < request.legal_actions_size(); ++i) {
        int count = 0;
        for (const v1::Card& card : observation.hand()) {
          if (card.colour() == request.legal_actions(i).colour()) ++count;
        }
        if (count > best_count) {
          best = i;
          best_count = count;
        }
      }
      return best;
    }
    case v1::DECISION_KIND_CHALLENGE_OR_ACCEPT: {
      const int players = observation.hand_sizes_size();
      const int step = observation.direction() == v1::DIRECTION_COUNTER_CLOCKWISE ? -1 : 1;
      const int offender = ((static_cast<int>(observation.seat()) - step) % players + players) % players;
      return IndexOf(request, observation.hand_sizes(offender) >= kChallengeHandSize
                                  ? v1::ACTION_KIND_CHALLENGE
                                  : v1::ACTION_KIND_ACCEPT);
    }
    default:
      // Plays come first (one that leaves a single card calls UNO for you), then DRAW or KEEP.
      return 0;
  }
}

}  // namespace

int main() {
  const char* address = std::getenv("ARENA_ADDRESS");
  const char* token = std::getenv("ARENA_TOKEN");
  if (address == nullptr || token == nullptr || !*address || !*token) {
    std::cerr << "ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)\n";
    return 2;
  }
  auto stub = v1::RefereeService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::PlayRequest, v1::PlayResponse>> stream(
      stub->Play(&context));

  v1::PlayRequest hello;
  hello.mutable_hello()->set_token(token);
  hello.mutable_hello()->set_bot_name(kBotName);
  hello.mutable_hello()->set_bot_version(kBotVersion);
  hello.mutable_hello()->set_protocol_version(v1::PROTOCOL_VERSION_1);
  if (!stream->Write(hello)) {
    std::cerr << "could not say hello to " << address << "\n";
    return 1;
  }
  v1::PlayResponse response;
  while (stream->Read(&response)) {
    switch (response.message_case()) {
      case v1::PlayResponse::kMatchStart:
        std::cerr << "match " << response.match_start().match_id() << ": seat "
                  << response.match_start().seat() << "\n";
        break;
      case v1::PlayResponse::kDecisionRequest: {
        v1::PlayRequest answer;
        answer.mutable_decision()->set_request_id(response.decision_request().request_id());
        answer.mutable_decision()->set_action_index(
            static_cast<uint32_t>(Decide(response.decision_request())));
        if (!stream->Write(answer)) {
          std::cerr << "the stream broke\n";
          return 1;
        }
        break;
      }
      case v1::PlayResponse::kMatchEnd:
        std::cerr << "match end after " << response.match_end().rounds() << " rounds\n";
        stream->WritesDone();
        return 0;  // the referee closes the stream; no need to wait for its status
      default:  // events only
        break;
    }
  }
  grpc::Status status = stream->Finish();
  std::cerr << "the referee closed the stream before the match ended: "
            << status.error_message() << "\n";
  return 1;
}
