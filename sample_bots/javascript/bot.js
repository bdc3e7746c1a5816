#!/usr/bin/env node
// UNO Arena sample bot in JavaScript: a gRPC client of RefereeService.Play.
//
// The referee starts this program with ARENA_ADDRESS (e.g. "unix:/tmp/arena-match-x/referee.sock")
// and ARENA_TOKEN in the environment. We say hello, then answer every decision request with
// the index of one of its legal actions, until match_end. The protocol is loaded at run time
// from referee.proto (a copy of protos/uno_arena/v1/referee.proto kept in this folder; set
// ARENA_PROTO to use another path).
//
// Strategy (the arena's "strategist" heuristics):
//   * shed high points first; Skip / Draw Two first when the next seat has <= 2 cards;
//   * hold wilds until nothing else plays; never bluff a Wild Draw Four;
//   * name the colour held most;
//   * challenge a Wild Draw Four only when its player holds a big hand (>= 6 cards).
// Under the house rules it declares (VARIANTS, as in bot.toml; docs/rules.md §21-§32):
//   * pass a pending penalty on when it can (a Reverse first, then a Draw Two, then a black
//     card), else challenge or accept as above;
//   * jump in whenever asked; swap hands with the seat holding the fewest cards; pass on
//     exchanges, and when it must give a card, give its costliest coloured one;
//   * play a +10 before a Wild.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_NAME = 'javascript-strategist';
const BOT_VERSION = '1.0';
const CHALLENGE_HAND_SIZE = 6;
const COLOURS = ['COLOUR_RED', 'COLOUR_YELLOW', 'COLOUR_GREEN', 'COLOUR_BLUE'];
// The house rules this bot handles, declared in hello (the same list as bot.toml).
const VARIANTS = [
  'VARIANT_STACKING', 'VARIANT_STACK_TWO_ON_FOUR', 'VARIANT_REVERSE_DEFLECTS', 'VARIANT_SEVEN_O',
  'VARIANT_EXCHANGE_ON_FIVE', 'VARIANT_JUMP_IN', 'VARIANT_ZERO_SCORES_50', 'VARIANT_COLOUR_CIRCLE',
  'VARIANT_DRAW_TEN', 'VARIANT_UNTIL_THE_LAST', 'VARIANT_UNO_IN_SEVEN', 'VARIANT_LAZY_SCORING',
  'VARIANT_MISTAKE_PENALTY',
];

// ---------------------------------------------------------------------------------------
// Randomness: seeded from match_start.seed and each request's id, so the bot is
// reproducible, and each answer depends on its request alone (`arena refeed` reproduces
// any decision, not only the first). The strategy only uses it to break exact ties.

function decisionSeed(seed, requestId) {
  return BigInt.asUintN(64, BigInt(seed || 0) ^ (BigInt(requestId || 0) * 0x9e3779b97f4a7c15n));
}

function makeRng(seed) {
  // mulberry32 over the 64-bit seed folded to 32 bits.
  const big = BigInt.asUintN(64, BigInt(seed || 0));
  let state = Number((big ^ (big >> 32n)) & 0xffffffffn) >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------
// Cards

function points(card) {
  switch (card.kind) {
    case 'CARD_KIND_NUMBER': return card.number || 0;
    case 'CARD_KIND_SKIP':
    case 'CARD_KIND_REVERSE':
    case 'CARD_KIND_DRAW_TWO': return 20;
    default: return 50; // wilds and +10
  }
}

// A black card: Wild, Wild Draw Four or +10 (no colour of its own).
function isWild(card) {
  return card.kind === 'CARD_KIND_WILD' || card.kind === 'CARD_KIND_WILD_DRAW_FOUR'
    || card.kind === 'CARD_KIND_DRAW_TEN';
}

// The colour held most; ties go to more points, then to the first colour (red, yellow, ...).
function mostHeldColour(hand) {
  const counts = [0, 0, 0, 0];
  const weight = [0, 0, 0, 0];
  for (const card of hand) {
    const c = COLOURS.indexOf(card.colour);
    if (c >= 0) {
      counts[c] += 1;
      weight[c] += points(card);
    }
  }
  let best = 0;
  for (let c = 1; c < 4; c++) {
    if (counts[c] > counts[best] || (counts[c] === counts[best] && weight[c] > weight[best])) {
      best = c;
    }
  }
  return COLOURS[best];
}

function mod(a, n) {
  return ((a % n) + n) % n;
}

function step(direction) {
  return direction === 'DIRECTION_COUNTER_CLOCKWISE' ? -1 : 1;
}

// ---------------------------------------------------------------------------------------
// The strategy: an index into request.legalActions.

function decide(request, rng) {
  const legal = request.legalActions;
  const obs = request.observation;
  const hand = obs.hand || [];
  const find = (pred) => legal.findIndex(pred);
  const byKind = (kind) => find((a) => a.kind === kind);

  switch (request.kind) {
    case 'DECISION_KIND_CHOOSE_COLOUR': {
      const colour = mostHeldColour(hand);
      const index = find((a) => a.kind === 'ACTION_KIND_CHOOSE_COLOUR' && a.colour === colour);
      return index >= 0 ? index : 0;
    }
    case 'DECISION_KIND_CHALLENGE_OR_ACCEPT':
      return challengeOrAccept(request);
    case 'DECISION_KIND_STACK_OR_ACCEPT': {
      // §21/§22: a card passes the penalty on: a Reverse costs least to lose, a black card most
      const rank = (card) => (card.kind === 'CARD_KIND_REVERSE' ? 0
        : card.kind === 'CARD_KIND_DRAW_TWO' ? 1 : 2);
      let best = -1;
      legal.forEach((a, index) => {
        if (a.kind === 'ACTION_KIND_PLAY' && (best < 0 || rank(a.card) < rank(legal[best].card))) {
          best = index;
        }
      });
      return best >= 0 ? best : challengeOrAccept(request);
    }
    case 'DECISION_KIND_JUMP_IN_OR_PASS': {
      const play = byKind('ACTION_KIND_PLAY'); // §25: shed a card and take the turn
      return play >= 0 ? play : 0;
    }
    case 'DECISION_KIND_CHOOSE_SEAT': {
      const pass = byKind('ACTION_KIND_PASS'); // §24: a blind swap of one card gains nothing
      if (pass >= 0) return pass;
      let best = 0; // §23: swap with the seat holding the fewest cards
      legal.forEach((a, index) => {
        if (obs.handSizes[a.seat || 0] < obs.handSizes[legal[best].seat || 0]) best = index;
      });
      return best;
    }
    case 'DECISION_KIND_GIVE_CARD': {
      let best = 0; // §24: give the costliest coloured card (black cards are worth keeping)
      const worth = (card) => (isWild(card) ? -1 : points(card));
      legal.forEach((a, index) => { if (worth(a.card) > worth(legal[best].card)) best = index; });
      return best;
    }
    case 'DECISION_KIND_PLAY_DRAWN_OR_KEEP': {
      const play = byKind('ACTION_KIND_PLAY');
      const keep = byKind('ACTION_KIND_KEEP');
      if (play < 0) return keep >= 0 ? keep : 0;
      const card = legal[play].card;
      if (card.kind === 'CARD_KIND_WILD_DRAW_FOUR' && holdsColour(hand, obs.colour) && keep >= 0) {
        return keep; // never bluff
      }
      return play;
    }
    default:
      return playOrDraw(request, rng);
  }
}

// §13: challenge only when the Wild Draw Four's player holds a big hand; else accept.
function challengeOrAccept(request) {
  const legal = request.legalActions;
  const obs = request.observation;
  const players = obs.handSizes.length;
  const offender = mod(obs.seat - step(obs.direction), players);
  const challenge = legal.findIndex((a) => a.kind === 'ACTION_KIND_CHALLENGE');
  if (challenge >= 0 && obs.handSizes[offender] >= CHALLENGE_HAND_SIZE) return challenge;
  const accept = legal.findIndex((a) => a.kind === 'ACTION_KIND_ACCEPT');
  return accept >= 0 ? accept : 0;
}

function holdsColour(hand, colour) {
  return hand.some((card) => !isWild(card) && card.colour === colour);
}

function playOrDraw(request, rng) {
  const legal = request.legalActions;
  const obs = request.observation;
  const hand = obs.hand || [];
  const plays = [];
  legal.forEach((a, index) => { if (a.kind === 'ACTION_KIND_PLAY') plays.push(index); });
  const coloured = plays.filter((i) => !isWild(legal[i].card));
  if (coloured.length > 0) {
    const counts = { COLOUR_RED: 0, COLOUR_YELLOW: 0, COLOUR_GREEN: 0, COLOUR_BLUE: 0 };
    for (const card of hand) if (card.colour in counts) counts[card.colour] += 1;
    const players = obs.handSizes.length;
    const following = mod(obs.seat + step(obs.direction), players);
    const threatened = obs.handSizes[following] <= 2;
    const value = (i) => {
      const card = legal[i].card;
      const attack = threatened
        && (card.kind === 'CARD_KIND_SKIP' || card.kind === 'CARD_KIND_DRAW_TWO') ? 1 : 0;
      return [attack, points(card), counts[card.colour] || 0];
    };
    const compare = (x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    let best = [];
    let bestValue = null;
    for (const i of coloured) {
      const v = value(i);
      const c = bestValue === null ? 1 : compare(v, bestValue);
      if (c > 0) {
        best = [i];
        bestValue = v;
      } else if (c === 0) {
        best.push(i);
      }
    }
    return best[Math.floor(rng() * best.length)];
  }
  const drawFour = plays.find((i) => legal[i].card.kind === 'CARD_KIND_WILD_DRAW_FOUR');
  if (drawFour !== undefined && !holdsColour(hand, obs.colour)) return drawFour;
  const drawTen = plays.find((i) => legal[i].card.kind === 'CARD_KIND_DRAW_TEN');
  if (drawTen !== undefined) return drawTen;
  const wild = plays.find((i) => legal[i].card.kind === 'CARD_KIND_WILD');
  if (wild !== undefined) return wild;
  const draw = legal.findIndex((a) => a.kind === 'ACTION_KIND_DRAW');
  return draw >= 0 ? draw : 0;
}

// ---------------------------------------------------------------------------------------
// The match stream

function loadService() {
  const protoPath = process.env.ARENA_PROTO || path.join(__dirname, 'referee.proto');
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: false, // fields in lowerCamelCase: requestId, legalActions, handSizes, ...
    longs: String, // uint64 (request ids, the seed) as decimal strings
    enums: String, // enum values by name: 'COLOUR_RED', 'DECISION_KIND_PLAY_OR_DRAW', ...
    defaults: true, // absent fields read as 0 / '' / [] (seat 0 is never undefined)
    oneofs: true, // message.message names the payload: 'decisionRequest', 'matchEnd', ...
  });
  return grpc.loadPackageDefinition(definition).uno_arena.v1.RefereeService;
}

function main() {
  const address = process.env.ARENA_ADDRESS;
  const token = process.env.ARENA_TOKEN;
  if (!address || !token) {
    console.error('ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)');
    process.exit(2);
  }
  const RefereeService = loadService();
  const client = new RefereeService(address, grpc.credentials.createInsecure());
  const call = client.Play();
  let seed = '0';
  let finished = false;

  call.on('data', (response) => {
    switch (response.message) {
      case 'matchStart':
        seed = response.matchStart.seed;
        console.error(`match ${response.matchStart.matchId}: seat ${response.matchStart.seat}`);
        break;
      case 'decisionRequest': {
        const request = response.decisionRequest;
        const index = decide(request, makeRng(decisionSeed(seed, request.requestId)));
        call.write({ decision: { requestId: request.requestId, actionIndex: index } });
        break;
      }
      case 'matchEnd':
        finished = true;
        console.error(`match end: scores ${response.matchEnd.scores.join(' ')}, `
          + `places ${response.matchEnd.places.join(' ')}`);
        call.end();
        break;
      default: // events only
        break;
    }
  });
  call.on('error', (error) => {
    if (finished) return;
    console.error(`stream error: ${error.message}`);
    process.exit(1);
  });
  call.on('end', () => {
    client.close();
    if (!finished) {
      console.error('the referee closed the stream before the match ended');
      process.exit(1);
    }
    process.exit(0);
  });
  call.write({
    hello: {
      token, botName: BOT_NAME, botVersion: BOT_VERSION, protocolVersion: 'PROTOCOL_VERSION_1',
      variants: VARIANTS,
    },
  });
}

module.exports = { decide, decisionSeed, makeRng, mostHeldColour, points, VARIANTS };

if (require.main === module) {
  main();
}
