// The message feed of the current view, in parts: the message window (feed_window), drawing
// (feed_draw), read tracking (feed_read), the message menu (feed_menu), local echo (feed_echo) and
// live updates (feed_live). Other modules import the feed from here.
export { currentView, selectedMessage, messageById, isAtNewest, mountFeed, openingParams, openView, catchUp, closeView, refreshAll, select, moveSelection } from "./feed_window.js";
export { avatar } from "./feed_draw.js";
export { stopReading, markUnreadFrom } from "./feed_read.js";
export { localEcho, dropEcho } from "./feed_echo.js";
export { addMessage, updateMessage, deleteMessages, reactionEvent, submessageEvent, flagsEvent } from "./feed_live.js";
export { openMenu, toggleReaction, toggleStarOf, selectedElement, editSelected, menuForSelected, reactToSelected } from "./feed_menu.js";
