import com.uno_arena.v1.Action;
import com.uno_arena.v1.ActionKind;
import com.uno_arena.v1.Card;
import com.uno_arena.v1.Colour;
import com.uno_arena.v1.Decision;
import com.uno_arena.v1.DecisionRequest;
import com.uno_arena.v1.Direction;
import com.uno_arena.v1.Hello;
import com.uno_arena.v1.Observation;
import com.uno_arena.v1.PlayRequest;
import com.uno_arena.v1.PlayResponse;
import com.uno_arena.v1.ProtocolVersion;
import com.uno_arena.v1.RefereeServiceGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * @BOT_NAME@: an UNO Arena bot in Java (grpc-java), a gRPC client of RefereeService.Play.
 *
 * <p>The referee starts it with ARENA_ADDRESS ("unix:/run/arena/referee.sock") and ARENA_TOKEN
 * in its environment. It says hello, answers every decision request with the index of one of
 * its legal actions, and exits at match end. Maven generates the stubs (package
 * com.uno_arena.v1) from src/main/proto/uno_arena/v1/referee.proto.
 *
 * <p>It plays the first playable card, names the colour it holds most, and challenges a Wild
 * Draw Four only from a seat holding a big hand. Change {@link #decide} to make it yours.
 */
public final class Bot {
    static final String NAME = "@BOT_NAME@";
    static final String VERSION = "0.1";
    /**
     * Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
     * almost surely held the colour in play, so the play was a bluff.
     */
    static final int CHALLENGE_HAND_SIZE = 6;

    /** The index of one of the request's legal actions. */
    static int decide(DecisionRequest request) {
        Observation observation = request.getObservation();
        List<Action> legal = request.getLegalActionsList();
        switch (request.getKind()) {
            case DECISION_KIND_CHOOSE_COLOUR:
                return mostHeldColour(observation, legal);
            case DECISION_KIND_CHALLENGE_OR_ACCEPT:
                return challengeOrAccept(observation, legal);
            default:
                // Plays are listed first (a play leaving one card calls UNO for you), then
                // DRAW or KEEP: the first legal action plays a card whenever one can be played.
                return 0;
        }
    }

    static int mostHeldColour(Observation observation, List<Action> legal) {
        int best = 0;
        int bestCount = -1;
        for (int index = 0; index < legal.size(); index++) {
            Colour colour = legal.get(index).getColour();
            int count = 0;
            for (Card card : observation.getHandList()) {
                if (card.getColour() == colour) {
                    count++;
                }
            }
            if (count > bestCount) {
                best = index;
                bestCount = count;
            }
        }
        return best;
    }

    static int challengeOrAccept(Observation observation, List<Action> legal) {
        int players = observation.getHandSizesCount();
        int step = observation.getDirection() == Direction.DIRECTION_COUNTER_CLOCKWISE ? -1 : 1;
        int offender = Math.floorMod(observation.getSeat() - step, players);
        ActionKind wanted = observation.getHandSizes(offender) >= CHALLENGE_HAND_SIZE
                ? ActionKind.ACTION_KIND_CHALLENGE : ActionKind.ACTION_KIND_ACCEPT;
        for (int index = 0; index < legal.size(); index++) {
            if (legal.get(index).getKind() == wanted) {
                return index;
            }
        }
        return 0;
    }

    public static void main(String[] args) throws InterruptedException {
        String address = System.getenv("ARENA_ADDRESS");
        String token = System.getenv("ARENA_TOKEN");
        if (address == null || token == null) {
            System.err.println("ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)");
            System.exit(2);
        }
        // "unix:/path/referee.sock" as given; "host:port" for a bot started by hand.
        String target = address.startsWith("unix:") ? address : "dns:///" + address;
        ManagedChannel channel =
                Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
        CountDownLatch finished = new CountDownLatch(1);
        int[] exitCode = {0};
        @SuppressWarnings("unchecked")
        StreamObserver<PlayRequest>[] outbox = new StreamObserver[1];
        outbox[0] = RefereeServiceGrpc.newStub(channel).play(new StreamObserver<PlayResponse>() {
            @Override
            public void onNext(PlayResponse response) {
                switch (response.getMessageCase()) {
                    case MATCH_START:
                        System.err.printf("match %s: seat %d%n",
                                response.getMatchStart().getMatchId(),
                                response.getMatchStart().getSeat());
                        break;
                    case DECISION_REQUEST:
                        DecisionRequest request = response.getDecisionRequest();
                        outbox[0].onNext(PlayRequest.newBuilder().setDecision(
                                Decision.newBuilder().setRequestId(request.getRequestId())
                                        .setActionIndex(decide(request))).build());
                        break;
                    case MATCH_END:
                        System.err.printf("match end: scores %s, places %s%n",
                                response.getMatchEnd().getScoresList(),
                                response.getMatchEnd().getPlacesList());
                        outbox[0].onCompleted();
                        break;
                    default:
                        break;
                }
            }

            @Override
            public void onError(Throwable error) {
                System.err.println("stream broke: " + error);
                exitCode[0] = 1;
                finished.countDown();
            }

            @Override
            public void onCompleted() {
                finished.countDown();
            }
        });
        outbox[0].onNext(PlayRequest.newBuilder().setHello(Hello.newBuilder()
                .setToken(token).setBotName(NAME).setBotVersion(VERSION)
                .setProtocolVersion(ProtocolVersion.PROTOCOL_VERSION_1)).build());
        finished.await();
        channel.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
        System.exit(exitCode[0]);
    }
}
