// @BOT_NAME@: an UNO Arena bot in Go, a gRPC client of RefereeService.Play.
//
// The referee starts it with ARENA_ADDRESS ("unix:/run/arena/referee.sock") and ARENA_TOKEN
// in its environment. It says hello, answers every decision request with the index of one
// of its legal actions, and exits at match end. The stubs in uno_arena/v1/ are generated
// from uno_arena/v1/referee.proto by vendor.sh (`arena vendor`).
//
// It plays the first playable card, names the colour it holds most, and challenges a Wild
// Draw Four only from a seat holding a big hand. Change decide() to make it yours.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "@BOT_NAME@/uno_arena/v1"
)

const (
	botName    = "@BOT_NAME@"
	botVersion = "0.1"
	// Challenge a Wild Draw Four only from a seat holding this many cards or more: a big
	// hand almost surely held the colour in play, so the play was a bluff.
	challengeHandSize = 6
)

// decide returns the index of one of request.LegalActions.
func decide(request *pb.DecisionRequest) uint32 {
	observation := request.GetObservation()
	legal := request.GetLegalActions()
	switch request.GetKind() {
	case pb.DecisionKind_DECISION_KIND_CHOOSE_COLOUR:
		return mostHeldColour(observation, legal)
	case pb.DecisionKind_DECISION_KIND_CHALLENGE_OR_ACCEPT:
		return challengeOrAccept(observation, legal)
	default:
		// Plays are listed first (a play leaving one card calls UNO for you), then
		// DRAW or KEEP: the first legal action plays a card whenever one can be played.
		return 0
	}
}

func mostHeldColour(observation *pb.Observation, legal []*pb.Action) uint32 {
	held := map[pb.Colour]int{}
	for _, card := range observation.GetHand() {
		held[card.GetColour()]++
	}
	best := uint32(0)
	for index, action := range legal {
		if held[action.GetColour()] > held[legal[best].GetColour()] {
			best = uint32(index)
		}
	}
	return best
}

func challengeOrAccept(observation *pb.Observation, legal []*pb.Action) uint32 {
	sizes := observation.GetHandSizes()
	step := 1
	if observation.GetDirection() == pb.Direction_DIRECTION_COUNTER_CLOCKWISE {
		step = -1
	}
	players := len(sizes)
	offender := ((int(observation.GetSeat())-step)%players + players) % players
	wanted := pb.ActionKind_ACTION_KIND_ACCEPT
	if sizes[offender] >= challengeHandSize {
		wanted = pb.ActionKind_ACTION_KIND_CHALLENGE
	}
	for index, action := range legal {
		if action.GetKind() == wanted {
			return uint32(index)
		}
	}
	return 0
}

// target turns ARENA_ADDRESS ("unix:/path/referee.sock", or "host:port" for a bot
// started by hand) into a gRPC target.
func target(address string) string {
	if strings.HasPrefix(address, "unix:") {
		return address
	}
	return "dns:///" + address
}

func main() {
	address, token := os.Getenv("ARENA_ADDRESS"), os.Getenv("ARENA_TOKEN")
	if address == "" || token == "" {
		log.Fatal("ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)")
	}
	connection, err := grpc.NewClient(target(address),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatalf("cannot reach the referee at %s: %v", address, err)
	}
	defer connection.Close()
	stream, err := pb.NewRefereeServiceClient(connection).Play(context.Background())
	if err != nil {
		log.Fatalf("cannot open the match stream: %v", err)
	}
	hello := &pb.Hello{Token: token, BotName: botName, BotVersion: botVersion,
		ProtocolVersion: pb.ProtocolVersion_PROTOCOL_VERSION_1}
	if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: hello}}); err != nil {
		log.Fatalf("cannot say hello: %v", err)
	}
	for {
		response, err := stream.Recv()
		if err == io.EOF {
			log.Fatal("the referee closed the stream before the match ended")
		}
		if err != nil {
			log.Fatalf("stream broke: %v", err)
		}
		switch message := response.GetMessage().(type) {
		case *pb.PlayResponse_MatchStart:
			log.Printf("match %s: seat %d", message.MatchStart.GetMatchId(), message.MatchStart.GetSeat())
		case *pb.PlayResponse_DecisionRequest:
			request := message.DecisionRequest
			decision := &pb.Decision{RequestId: request.GetRequestId(),
				Choice: &pb.Decision_ActionIndex{ActionIndex: decide(request)}}
			if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: decision}}); err != nil {
				log.Fatalf("cannot answer request %d: %v", request.GetRequestId(), err)
			}
		case *pb.PlayResponse_MatchEnd:
			fmt.Fprintf(os.Stderr, "match end: scores %v, places %v\n",
				message.MatchEnd.GetScores(), message.MatchEnd.GetPlaces())
			_ = stream.CloseSend()
			return
		}
	}
}
