// The compose box's shared state (its parts read and change it through C).


export const C = {
  target: null, // {type: "stream", stream_id, topic} | {type: "direct", to: [ids]}
  els: {},
  draftIds: new Map(), // conversation key -> draft id
  localText: new Map(), // conversation key -> text left there this visit (drafts save asynchronously)
  lastTypingStart: 0,
  typingStopTimer: null,
  typingKey: null,
  completion: null, // {start, end, items, index}
};
