#!/usr/bin/env node
// @BOT_NAME@: an UNO Arena bot in JavaScript (Node.js), a gRPC client of RefereeService.Play.
//
// The referee starts it with ARENA_ADDRESS ("unix:/run/arena/referee.sock") and ARENA_TOKEN in
// its environment. It says hello, answers every decision request with the index of one of its
// legal actions, and exits at match end. The protocol is loaded at run time from
// referee.proto, the copy `arena new` put in this folder.
//
// It plays the first playable card, names the colour it holds most, and challenges a Wild
// Draw Four only from a seat holding a big hand. Change decide() to make it yours.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_NAME = '@BOT_NAME@';
const BOT_VERSION = '0.1';
// Challenge a Wild Draw Four only from a seat holding this many cards or more: a big hand
// almost surely held the colour in play, so the play was a bluff.
const CHALLENGE_HAND_SIZE = 6;

// The index of one of request.legalActions. The request is a plain object: lowerCamelCase
// field names, enums as strings ('DECISION_KIND_CHOOSE_COLOUR'), every field present.
function decide(request) {
  const legal = request.legalActions;
  const observation = request.observation;
  switch (request.kind) {
    case 'DECISION_KIND_CHOOSE_COLOUR': {
      const held = (colour) => observation.hand.filter((card) => card.colour === colour).length;
      let best = 0;
      legal.forEach((action, index) => {
        if (held(action.colour) > held(legal[best].colour)) best = index;
      });
      return best;
    }
    case 'DECISION_KIND_CHALLENGE_OR_ACCEPT': {
      const sizes = observation.handSizes;
      const step = observation.direction === 'DIRECTION_COUNTER_CLOCKWISE' ? -1 : 1;
      const offender = (((observation.seat - step) % sizes.length) + sizes.length) % sizes.length;
      const wanted = sizes[offender] >= CHALLENGE_HAND_SIZE ? 'ACTION_KIND_CHALLENGE' : 'ACTION_KIND_ACCEPT';
      return Math.max(0, legal.findIndex((action) => action.kind === wanted));
    }
    default:
      // Plays come first (one that leaves a single card calls UNO for you), then DRAW or KEEP.
      return 0;
  }
}

function main() {
  const address = process.env.ARENA_ADDRESS;
  const token = process.env.ARENA_TOKEN;
  if (!address || !token) {
    console.error('ARENA_ADDRESS and ARENA_TOKEN must be set (the referee sets them)');
    process.exit(2);
  }
  const definition = protoLoader.loadSync(path.join(__dirname, 'referee.proto'), {
    keepCase: false, longs: String, enums: String, defaults: true, oneofs: true,
  });
  const { RefereeService } = grpc.loadPackageDefinition(definition).uno_arena.v1;
  const client = new RefereeService(address, grpc.credentials.createInsecure());
  const call = client.Play();
  let finished = false;
  call.on('data', (response) => {
    switch (response.message) { // which payload: the events alone leave it undefined
      case 'matchStart':
        console.error(`match ${response.matchStart.matchId}: seat ${response.matchStart.seat}`);
        break;
      case 'decisionRequest': {
        const request = response.decisionRequest;
        call.write({ decision: { requestId: request.requestId, actionIndex: decide(request) } });
        break;
      }
      case 'matchEnd':
        finished = true;
        console.error(`match end: scores ${response.matchEnd.scores.join(' ')}`);
        call.end();
        break;
      default:
        break;
    }
  });
  call.on('error', (error) => {
    if (!finished) {
      console.error(`stream broke: ${error.message}`);
      process.exit(1);
    }
  });
  call.on('end', () => {
    client.close();
    if (!finished) {
      console.error('the referee closed the stream before the match ended');
      process.exit(1);
    }
  });
  call.write({
    hello: { token, botName: BOT_NAME, botVersion: BOT_VERSION, protocolVersion: 'PROTOCOL_VERSION_1' },
  });
}

main();
