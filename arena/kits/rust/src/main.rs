//! @BOT_NAME@: an UNO Arena bot in Rust (tonic + prost), a gRPC client of RefereeService.Play.
//!
//! The referee starts it with ARENA_ADDRESS ("unix:/run/arena/referee.sock") and ARENA_TOKEN
//! in its environment. It says hello, answers every decision request with the index of one
//! of its legal actions, and exits at match end. build.rs generates the client and the
//! messages from uno_arena/v1/referee.proto.
//!
//! It plays the first playable card, names the colour it holds most, and challenges a Wild
//! Draw Four only from a seat holding a big hand. Change `decide` to make it yours.

use std::error::Error;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

pub mod pb {
    tonic::include_proto!("uno_arena.v1");
}

use pb::referee_service_client::RefereeServiceClient;
use pb::{
    decision, play_request, play_response, ActionKind, Colour, Decision, DecisionKind,
    DecisionRequest, Direction, Hello, PlayRequest, ProtocolVersion,
};

const BOT_NAME: &str = "@BOT_NAME@";
const BOT_VERSION: &str = "0.1";
/// Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
/// almost surely held the colour in play, so the play was a bluff.
const CHALLENGE_HAND_SIZE: u32 = 6;

/// The index of one of `request.legal_actions`.
fn decide(request: &DecisionRequest) -> u32 {
    let observation = request.observation.clone().unwrap_or_default();
    let legal = &request.legal_actions;
    let index_of = |wanted: ActionKind| legal.iter().position(|a| a.kind() == wanted);
    match request.kind() {
        DecisionKind::ChooseColour => {
            let held = |colour: Colour| {
                observation
                    .hand
                    .iter()
                    .filter(|c| c.colour() == colour)
                    .count()
            };
            (0..legal.len())
                .max_by_key(|&i| (held(legal[i].colour()), usize::MAX - i))
                .unwrap_or(0) as u32
        }
        DecisionKind::ChallengeOrAccept => {
            let players = observation.hand_sizes.len() as i64;
            let step = if observation.direction() == Direction::CounterClockwise {
                -1
            } else {
                1
            };
            let offender = (observation.seat as i64 - step).rem_euclid(players.max(1)) as usize;
            let big_hand =
                observation.hand_sizes.get(offender).copied().unwrap_or(0) >= CHALLENGE_HAND_SIZE;
            let wanted = if big_hand {
                ActionKind::Challenge
            } else {
                ActionKind::Accept
            };
            index_of(wanted).unwrap_or(0) as u32
        }
        // Plays are listed first (a play leaving one card calls UNO for you), then DRAW or
        // KEEP: the first legal action plays a card whenever one can be played.
        _ => 0,
    }
}

/// ARENA_ADDRESS is "unix:/path/referee.sock" (tonic reads that form), or "host:port" for
/// a bot started by hand.
fn endpoint(address: &str) -> String {
    if address.starts_with("unix:") {
        address.to_string()
    } else {
        format!("http://{address}")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let address = std::env::var("ARENA_ADDRESS")
        .map_err(|_| "ARENA_ADDRESS must be set (the referee sets it)")?;
    let token = std::env::var("ARENA_TOKEN")
        .map_err(|_| "ARENA_TOKEN must be set (the referee sets it)")?;
    let mut client = RefereeServiceClient::connect(endpoint(&address)).await?;
    let (outbox, requests) = mpsc::channel::<PlayRequest>(4);
    outbox
        .send(PlayRequest {
            message: Some(play_request::Message::Hello(Hello {
                token,
                bot_name: BOT_NAME.into(),
                bot_version: BOT_VERSION.into(),
                protocol_version: ProtocolVersion::ProtocolVersion1.into(),
                // Fields the protocol adds later (the variants a bot supports, ...) keep
                // their defaults: this bot plays official matches.
                ..Default::default()
            })),
        })
        .await?;
    let mut responses = client
        .play(ReceiverStream::new(requests))
        .await?
        .into_inner();
    while let Some(response) = responses.message().await? {
        match response.message {
            Some(play_response::Message::MatchStart(start)) => {
                eprintln!("match {}: seat {}", start.match_id, start.seat);
            }
            Some(play_response::Message::DecisionRequest(request)) => {
                let answer = Decision {
                    request_id: request.request_id,
                    choice: Some(decision::Choice::ActionIndex(decide(&request))),
                };
                outbox
                    .send(PlayRequest {
                        message: Some(play_request::Message::Decision(answer)),
                    })
                    .await?;
            }
            Some(play_response::Message::MatchEnd(end)) => {
                eprintln!(
                    "match end: scores {:?}, places {:?}",
                    end.scores, end.places
                );
                return Ok(());
            }
            None => {}
        }
    }
    Err("the referee closed the stream before the match ended".into())
}
