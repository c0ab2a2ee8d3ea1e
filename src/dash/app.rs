//! The dashboard's state and what each key does to it. No terminal here: the event loop feeds
//! keys in, the renderer reads the state out.

use crate::overview::Status;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Gates,
    Output,
}

/// A background re-run of the check gates, shared with its worker thread.
#[derive(Debug, Default)]
pub struct Rerun {
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub finished: bool,
    pub error: Option<String>,
}

pub struct App {
    pub status: Status,
    pub selected: usize,
    pub focus: Focus,
    pub scroll: u16,
    pub confirm_cancel: bool,
    pub color: bool,
    pub now_ms: u64,
    pub rerun: Option<Arc<Mutex<Rerun>>>,
    pub message: Option<String>,
    pub quit: bool,
}

/// What the event loop must do after a key.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    None,
    Rerun,
    CancelLoop(String),
}

impl App {
    pub fn new(status: Status, color: bool, now_ms: u64) -> Self {
        Self {
            status,
            selected: 0,
            focus: Focus::Gates,
            scroll: 0,
            confirm_cancel: false,
            color,
            now_ms,
            rerun: None,
            message: None,
            quit: false,
        }
    }

    pub fn refresh(&mut self, status: Status, now_ms: u64) {
        self.status = status;
        self.now_ms = now_ms;
        self.selected = self.selected.min(self.status.gates.len().saturating_sub(1));
    }

    pub fn rerunning(&self) -> bool {
        self.rerun
            .as_ref()
            .is_some_and(|r| !r.lock().map(|r| r.finished).unwrap_or(true))
    }

    pub fn key(&mut self, key: char, ctrl: bool) -> Action {
        if ctrl && key == 'c' {
            self.quit = true;
            return Action::None;
        }
        if self.confirm_cancel {
            self.confirm_cancel = false;
            return match (key, self.status.loops.first()) {
                ('y' | 'Y', Some(l)) => Action::CancelLoop(l.file.clone()),
                _ => {
                    self.message = Some("loop not cancelled".into());
                    Action::None
                }
            };
        }
        match key {
            'q' => self.quit = true,
            'j' | '↓' => match self.focus {
                Focus::Gates => {
                    if self.selected + 1 < self.status.gates.len() {
                        self.selected += 1;
                        self.scroll = 0;
                    }
                }
                Focus::Output => self.scroll = self.scroll.saturating_add(1),
            },
            'k' | '↑' => match self.focus {
                Focus::Gates => {
                    self.selected = self.selected.saturating_sub(1);
                    self.scroll = 0;
                }
                Focus::Output => self.scroll = self.scroll.saturating_sub(1),
            },
            '\n' | '\t' => {
                self.focus = match self.focus {
                    Focus::Gates => Focus::Output,
                    Focus::Output => Focus::Gates,
                }
            }
            'r' if self.rerunning() => self.message = Some("a re-run is already under way".into()),
            'r' => return Action::Rerun,
            'c' if self.status.loops.is_empty() => self.message = Some("no loop to cancel".into()),
            'c' => self.confirm_cancel = true,
            _ => {}
        }
        Action::None
    }
}
