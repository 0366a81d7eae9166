# Cross-build of sieveqfw.sys with mingw-w64 (included from ../Makefile).
# The result is compiled and linked, never loaded here.

DDK_INC    := /usr/share/mingw-w64/include/ddk
KCFLAGS    := -std=c11 -Wall -Wextra -Werror -O2 -DSQFW_KERNEL -D_WIN64 -I$(DDK_INC) -Iwfp \
              -ffreestanding -fno-stack-protector -fno-builtin -mno-red-zone -fno-asynchronous-unwind-tables
WFP_SRC    := wfp/driver.c wfp/callouts.c wfp/request.c wfp/shaper.c wfp/queue_records.c wfp/events.c wfp/processes.c wfp/bfe.c wfp/bootfilters.c wfp/etw.c
KCORE_OBJ  := $(patsubst core/%.c,$(BUILD)/win/core/%.o,$(CORE_SRC))
WFP_OBJ    := $(patsubst wfp/%.c,$(BUILD)/win/wfp/%.o,$(WFP_SRC))
SYS        := $(BUILD)/win/sieveqfw.sys

$(BUILD)/win/core/%.o: core/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(MINGW) $(KCFLAGS) -c $< -o $@

$(BUILD)/win/wfp/%.o: wfp/%.c wfp/*.h wfp/include/wfp_decls.h $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(MINGW) $(KCFLAGS) -c $< -o $@

$(BUILD)/win/libfwpkclnt.a: wfp/fwpkclnt.def
	@mkdir -p $(dir $@)
	$(DLLTOOL) -d $< -l $@ -k

$(BUILD)/win/libndis.a: wfp/ndis.def
	@mkdir -p $(dir $@)
	$(DLLTOOL) -d $< -l $@ -k

$(SYS): $(KCORE_OBJ) $(WFP_OBJ) $(BUILD)/win/libfwpkclnt.a $(BUILD)/win/libndis.a
	$(MINGW) -nostdlib -shared -Wl,--subsystem,native -Wl,--entry,DriverEntry \
	    -Wl,--dynamicbase -Wl,--nxcompat -Wl,--forceinteg -Wl,--image-base,0x140000000 \
	    -Wl,--file-alignment,0x200 -Wl,--section-alignment,0x1000 \
	    -o $@ $(KCORE_OBJ) $(WFP_OBJ) $(BUILD)/win/libfwpkclnt.a $(BUILD)/win/libndis.a -lntoskrnl

wfp: $(SYS)

pe-check: $(SYS)
	@./scripts/pe-check.sh $(OBJDUMP) $(SYS)
